/**
 * The findings of each step, read from the answer of the resource it runs: the few figures the
 * analyst's conclusion combines (docs/ai-resources.md#the-conclusion).
 */
import type { AdviceFacts } from '../../../analysis/advice/analyze';
import type {
  AdviceFindings,
  BestEstimator,
  BlockFindings,
  DecisionFindings,
  EstimatorFindings,
  LandscapeFindings,
  NextBlockFindings,
  TransactionFindings,
} from '../../../analysis/analyst/findings';
import type { BlockFacts } from '../../../analysis/block/analyze';
import type { TransactionFacts } from '../../../analysis/transaction/analyze';
import type { Scoreboard } from '../../../capabilities/observatory/observatory';
import type { FeeLandscape } from '../../fees/landscape/schema';
import type { NextBlock } from '../../mining/nextblock/schema';

export function decisionFindings(
  result: {
    decision: 'send' | 'wait';
    reason_codes: readonly string[];
    potential_savings: { sat_vb: number; percent: number; at_140_vbytes_sat: number };
  },
  tiers: { fastest: number; economy: number },
): DecisionFindings {
  return {
    decision: result.decision,
    fastest_sat_vb: tiers.fastest,
    economy_sat_vb: tiers.economy,
    reason_codes: [...result.reason_codes],
    savings_sat_vb: result.potential_savings.sat_vb,
    savings_percent: result.potential_savings.percent,
    savings_at_140_vbytes_sat: result.potential_savings.at_140_vbytes_sat,
  };
}

export function nextBlockFindings({ data }: NextBlock): NextBlockFindings {
  return {
    height: data.height,
    entry_rate_sat_vb: data.entry_fee_rate_sat_vb,
    entry_rule: data.entry_rule,
    median_rate_sat_vb: data.fee_rates_sat_vb.p50,
    block_full: data.block_full,
    chance_within_10_minutes: data.expected.probability_within['10_minutes'],
    estimators: data.estimators.flatMap((e) =>
      e.status === 'ok'
        ? [
            {
              source: e.source,
              fastest_sat_vb: e.fastest_sat_vb,
              gets_in: e.verdict === 'gets_in',
              overpay_at_140_vbytes_sat: e.overpay_at_140_vbytes_sat,
            },
          ]
        : [],
    ),
  };
}

export function adviceFindings(facts: AdviceFacts): AdviceFindings {
  return {
    urgency: facts.urgency,
    horizon_blocks: facts.horizon_blocks,
    tier: facts.tier_used,
    rate_sat_vb: facts.recommended_fee_rate_sat_vb,
    vsize: facts.assumed_vsize,
    fee_sat: facts.fee_sat,
    next_block_fee_sat: facts.next_block_fee_sat,
    decision: facts.decision,
    by_deferring_sat: facts.savings.by_deferring_sat,
    confidence: facts.confidence.level,
    fastest_sat_vb: facts.market.tiers.fastest,
    minimum_sat_vb: facts.market.tiers.minimum,
    fee_share_percent: facts.amount?.fee_share_percent ?? null,
  };
}

/**
 * The scoreboard's first-ranked row of each horizon, as the scoreboard ranks it. A row without
 * judged estimates is never named, whatever rank it carries.
 */
export function estimatorFindings(board: Scoreboard): EstimatorFindings {
  const best: BestEstimator[] = [];
  for (const target of board.horizons) {
    const row = board.rows.find(
      (r) =>
        r.target === target && r.rank === 1 && r.n > 0 && r.hit_rate !== undefined && r.hit_rate !== null,
    );
    if (row)
      best.push({
        target,
        source: row.source,
        hit_rate: row.hit_rate!,
        n: row.n,
        median_overpayment_sats_140: row.median_overpayment_sats_140 ?? null,
      });
  }
  const hours = board.window.hours;
  return {
    window_hours: hours,
    best,
    empty_reason:
      best.length > 0 ? null : (board.empty_reason ?? 'no estimate has been judged in the window'),
  };
}

export function landscapeFindings({ data }: FeeLandscape): LandscapeFindings {
  const fastest = data.tiers.find((t) => t.tier === 'fastest')!;
  const economy = data.tiers.find((t) => t.tier === 'economy')!;
  return {
    environment: data.environment.name,
    trend_direction: data.trend.direction,
    trend_change_percent: data.trend.change_percent,
    fastest_low_sat_vb: fastest.low_sat_vb,
    fastest_high_sat_vb: fastest.high_sat_vb,
    sources_quoting: fastest.quotes.length,
    economy_sat_vb: economy.low_sat_vb,
    projected_block_floors_sat_vb: data.projected_blocks.map((b) => b.min_fee_rate_sat_vb),
    send_wait: decisionFindings(data.send_wait, {
      fastest: data.costs.find((c) => c.tier === 'fastest')!.rate_sat_vb,
      economy: data.costs.find((c) => c.tier === 'economy')!.rate_sat_vb,
    }),
  };
}

export function transactionFindings(facts: TransactionFacts): TransactionFindings {
  return {
    txid: facts.transaction.txid,
    vsize: facts.transaction.vsize,
    fee_sat: facts.fee?.fee_sat ?? null,
    fee_rate_sat_vb: facts.fee?.fee_rate_sat_vb ?? null,
    confirmed: facts.status.confirmed,
    confirmations: facts.status.confirmations,
    replaceable: facts.rbf.signals_bip125 || facts.rbf.truc_v3,
    package_rate_sat_vb:
      facts.cpfp && facts.cpfp.ancestors.length + facts.cpfp.descendants.length > 0
        ? facts.cpfp.package_fee_rate_sat_vb
        : null,
  };
}

export function blockFindings(facts: BlockFacts): BlockFindings {
  return {
    height: facts.block.height,
    fullness_percent: facts.block.fullness_percent,
    median_rate_sat_vb: facts.fee_rates_sat_vb?.p50 ?? null,
    recent_median_sat_vb: facts.recent?.median_p50_sat_vb ?? null,
    comparison: facts.recent?.comparison ?? null,
  };
}
