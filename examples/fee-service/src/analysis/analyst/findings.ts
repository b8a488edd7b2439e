/**
 * The figures each analyst step hands the conclusion, named once: the step's evidence is its
 * resource's whole answer, and these are the few numbers of it a conclusion combines. A step fills
 * the part it knows; the conclusion says what it lacked.
 */
import type { TierName } from '../../domain/types';

export interface DecisionFindings {
  decision: 'send' | 'wait';
  /** The tiers the decision compared: waiting means the economy tier. */
  fastest_sat_vb: number;
  economy_sat_vb: number;
  reason_codes: string[];
  savings_sat_vb: number;
  savings_percent: number;
  savings_at_140_vbytes_sat: number;
}

export interface NextBlockFindings {
  height: number;
  /** The rate a transaction needs to get into it now. */
  entry_rate_sat_vb: number;
  entry_rule: string;
  median_rate_sat_vb: number;
  block_full: boolean;
  /** Chance the block comes within 10 minutes. */
  chance_within_10_minutes: number;
  /** Each estimator's next-block rate now, and whether it reaches the entry rate. */
  estimators: {
    source: string;
    fastest_sat_vb: number;
    gets_in: boolean;
    overpay_at_140_vbytes_sat: number;
  }[];
}

export interface AdviceFindings {
  urgency: 'low' | 'medium' | 'high';
  horizon_blocks: number;
  tier: TierName;
  rate_sat_vb: number;
  vsize: number;
  fee_sat: number;
  next_block_fee_sat: number;
  decision: 'send' | 'wait';
  by_deferring_sat: number | null;
  confidence: string;
  /** The market's fastest and minimum tiers the advice read. */
  fastest_sat_vb: number;
  minimum_sat_vb: number;
  /** The fee as a share of the amount sent, when the question gave one. */
  fee_share_percent: number | null;
}

/** The scoreboard's first-ranked estimator of one horizon, as the scoreboard ranks it. */
export interface BestEstimator {
  target: number;
  source: string;
  hit_rate: number;
  n: number;
  median_overpayment_sats_140: number | null;
}

export interface EstimatorFindings {
  window_hours: number;
  best: BestEstimator[];
  /** Why there is no ranking (no scored estimates yet). */
  empty_reason: string | null;
}

export interface LandscapeFindings {
  environment: string;
  trend_direction: string;
  trend_change_percent: number;
  fastest_low_sat_vb: number;
  fastest_high_sat_vb: number;
  sources_quoting: number;
  economy_sat_vb: number;
  /** Lowest rate of each projected block, the next one first (the last holds the rest of the mempool). */
  projected_block_floors_sat_vb: number[];
  /** send-wait-v1 on the landscape's primary tiers (the decision's algorithm). */
  send_wait: DecisionFindings;
}

export interface TransactionFindings {
  txid: string;
  vsize: number;
  fee_sat: number | null;
  fee_rate_sat_vb: number | null;
  confirmed: boolean;
  confirmations: number;
  replaceable: boolean;
  /** Its unconfirmed package (with ancestors and descendants), when it has one. */
  package_rate_sat_vb: number | null;
}

export interface BlockFindings {
  height: number;
  fullness_percent: number;
  median_rate_sat_vb: number | null;
  recent_median_sat_vb: number | null;
  comparison: 'higher' | 'in_line' | 'lower' | null;
}

export interface Findings {
  decision?: DecisionFindings;
  next_block?: NextBlockFindings;
  advice?: AdviceFindings;
  estimators?: EstimatorFindings;
  landscape?: LandscapeFindings;
  transaction?: TransactionFindings;
  block?: BlockFindings;
}
