import { btcToSats } from '../../../analysis/advice/amount';
import { adviseFee } from '../../../analysis/advice/analyze';
import { URGENCIES, URGENCY_HORIZON_BLOCKS, type Urgency } from '../../../analysis/advice/context-words';
import { type AnalystToolbox, StepFailure, type StepOutput } from '../../../analysis/analyst/run';
import { formatInt, formatRate, formatSats, plural } from '../../../analysis/format';
import type { FeeMarket } from '../../../analysis/market';
import type { TransactionFacts } from '../../../analysis/transaction/analyze';
import type { CapabilitySet } from '../../../capabilities';
import type { Observatory } from '../../../capabilities/observatory/observatory';
import { FeeServiceError } from '../../../domain/errors';
import { decideSendWait } from '../../../domain/send-wait';
import { UpstreamNotFoundError } from '../../../upstreams/errors';
import { readFeeLandscape } from '../../fees/landscape/read';
import { feeLandscape } from '../../fees/landscape/resource';
import type { FeeLandscape } from '../../fees/landscape/schema';
import { readNextBlock } from '../../mining/nextblock/read';
import { nextBlock } from '../../mining/nextblock/resource';
import type { NextBlock } from '../../mining/nextblock/schema';
import { NoReadingError } from '../../shared/cached-reading';
import { explainBlockFacts, explainTransactionFacts, InconsistentUpstreamError } from '../shared/chain';
import { EVIDENCE_WINDOW_HOURS, OBSERVATORY_SOURCE, observatoryOf, recentFloor } from '../shared/observatory';
import {
  adviceFindings,
  blockFindings,
  decisionFindings,
  estimatorFindings,
  landscapeFindings,
  nextBlockFindings,
  transactionFindings,
} from './findings';

/** An upstream failure as a step failure: unknown target, or data unavailable. */
function asStepFailure(error: unknown, what: string): never {
  if (error instanceof UpstreamNotFoundError) throw new StepFailure('not_found', `${what} not found`);
  if (
    error instanceof FeeServiceError ||
    error instanceof InconsistentUpstreamError ||
    error instanceof NoReadingError
  ) {
    throw new StepFailure('unavailable', `${what}: the upstream is unavailable (${error.message})`);
  }
  throw error;
}

function transactionSummary(facts: TransactionFacts): string {
  const { fee, market, status, transaction } = facts;
  const paid = fee
    ? `pays ${formatSats(fee.fee_sat)} for ${formatInt(transaction.vsize)} vB (${formatRate(fee.fee_rate_sat_vb)})`
    : `has an unknown fee (${formatInt(transaction.vsize)} vB)`;
  const where = status.confirmed
    ? `is confirmed with ${plural(status.confirmations, 'confirmation')}`
    : market?.would_be_included_next_block
      ? `is unconfirmed and reaches the next block's entry rate of ${formatRate(market.next_block_floor_sat_vb)}: as projected now it would be included`
      : market
        ? `is unconfirmed and below the next block's entry rate of ${formatRate(market.next_block_floor_sat_vb)}`
        : 'is unconfirmed';
  return `Transaction ${transaction.txid.slice(0, 16)}… ${paid} and ${where}.`;
}

function previewStep(market: FeeMarket): StepOutput {
  const figures = decideSendWait({
    tiers: market.tiers,
    mempool: { count: market.mempool_count, vsize: market.mempool_vsize },
  });
  const { tiers } = market;
  return {
    summary: `Fastest ${formatRate(tiers.fastest)}, hour ${formatRate(tiers.hour)}, economy ${formatRate(tiers.economy)}; the mempool holds ${formatInt(market.mempool_vsize)} vB (${plural(market.projected_block_count, 'block')}).`,
    evidence: {
      fee_rates_sat_vb: tiers,
      mempool: figures.mempool,
      potential_savings: figures.potential_savings,
      next_block_floor_sat_vb: market.next_block_floor_sat_vb,
    },
  };
}

function decisionStep(market: FeeMarket): StepOutput {
  const result = decideSendWait({
    tiers: market.tiers,
    mempool: { count: market.mempool_count, vsize: market.mempool_vsize },
  });
  const { sat_vb, percent } = result.potential_savings;
  return {
    summary:
      result.decision === 'wait'
        ? `send-wait-v1 says wait: a lower tier saves ${formatRate(sat_vb)} (${percent}% of the fastest rate).`
        : `send-wait-v1 says send: waiting would save only ${formatRate(sat_vb)} (${percent}%).`,
    evidence: {
      fee_rates_sat_vb: market.tiers,
      decision: result.decision,
      reason_codes: result.reason_codes,
      potential_savings: result.potential_savings,
    },
    findings: { decision: decisionFindings(result, market.tiers) },
  };
}

/** The next-block resource's answer as a step: the whole body (its `meta` is the reading's provenance). */
function nextBlockStep(body: NextBlock): StepOutput {
  const { data } = body;
  const source =
    data.basis === 'block_template' ? "Bitcoin Core's block template" : "mempool.space's projection";
  return {
    summary: `The next block (height ${data.height}, from ${source}) holds ${plural(data.transaction_count, 'transaction')} in ${formatInt(data.vsize)} vB; getting in takes ${formatRate(data.entry_fee_rate_sat_vb)} (median ${formatRate(data.fee_rates_sat_vb.p50)}), and its fees of ${formatSats(data.fees.total_sat)} are ${data.fees.fees_share_percent}% of the reward.`,
    evidence: body,
    findings: { next_block: nextBlockFindings(body) },
  };
}

/** The landscape resource's answer as a step: the whole body (its `meta` is the reading's provenance). */
function landscapeStep(body: FeeLandscape): StepOutput {
  const { data } = body;
  const fastest = data.tiers.find((tier) => tier.tier === 'fastest')!;
  const range =
    fastest.low_sat_vb === fastest.high_sat_vb
      ? formatRate(fastest.high_sat_vb)
      : `${formatRate(fastest.low_sat_vb)} to ${formatRate(fastest.high_sat_vb)}`;
  return {
    summary: `The fee environment is ${data.environment.name}: the fastest tier is ${range} across ${plural(fastest.quotes.length, 'source')}, block median rates are ${data.trend.direction} (${data.trend.change_percent}%), and send-wait-v1 says ${data.send_wait.decision}.`,
    evidence: body,
    findings: { landscape: landscapeFindings(body) },
  };
}

async function observatoryStep(observatory: Observatory): Promise<StepOutput> {
  const board = await observatory.scoreboard({ hours: EVIDENCE_WINDOW_HOURS });
  const findings = estimatorFindings(board);
  if (findings.best.length === 0)
    return {
      summary: `The observatory has no scored estimates yet (${findings.empty_reason}).`,
      evidence: board,
      findings: { estimators: findings },
    };
  const best = findings.best.map(
    (b) => board.rows.find((r) => r.target === b.target && r.source === b.source)!,
  );
  return {
    summary: `Over the last ${EVIDENCE_WINDOW_HOURS} hours the scoreboard ranks first ${findings.best
      .map((r) => `${r.source} at ${plural(r.target, 'block')} (hit rate ${Math.round(r.hit_rate * 100)}%)`)
      .join(', ')}.`,
    evidence: { window: board.window, best },
    findings: { estimators: findings },
  };
}

/**
 * The analyst's steps in this deployment, each running another resource's computation in
 * process (so the analyst never pays itself). Steps whose capability is missing are left out and
 * reported unavailable.
 */
export function analystToolbox(capabilities: CapabilitySet, market: FeeMarket): AnalystToolbox {
  const mempool = capabilities.bitcoin?.mempool;
  const observatory = observatoryOf(capabilities);
  const toolbox: AnalystToolbox = {
    preview: async () => previewStep(market),
    decision: async () => decisionStep(market),
    fee_advice: async (args) => {
      const urgency = URGENCIES.includes(args.urgency as Urgency) ? (args.urgency as Urgency) : undefined;
      const amountSat = args.amount_btc === undefined ? undefined : btcToSats(args.amount_btc);
      if (amountSat === null)
        throw new StepFailure('bad_input', `amount_btc ${args.amount_btc} is not a BTC amount`);
      const probe = adviseFee({ market, ...(urgency ? { urgency } : {}) });
      const source = OBSERVATORY_SOURCE[capabilities.bitcoin?.primary ?? 'mempool'];
      const [floor, hit] = await Promise.all([
        recentFloor(capabilities, market.tiers.minimum),
        observatory
          ?.hitRate(source, URGENCY_HORIZON_BLOCKS[probe.urgency], EVIDENCE_WINDOW_HOURS)
          .catch(() => undefined),
      ]);
      const facts = adviseFee({
        market,
        ...(urgency ? { urgency } : {}),
        ...(amountSat !== undefined ? { amountSat } : {}),
        recentFloorSatVb: floor,
        evidence: hit
          ? {
              source,
              target: probe.horizon_blocks,
              hit_rate: hit.hit_rate,
              n: hit.n,
              window_hours: EVIDENCE_WINDOW_HOURS,
            }
          : null,
      });
      return {
        summary: `For ${facts.urgency} urgency pay ${formatRate(facts.recommended_fee_rate_sat_vb)}, about ${formatSats(facts.fee_sat)} for ${facts.assumed_vsize} vB; ${facts.decision === 'wait' ? 'consider waiting' : 'send now'}.`,
        evidence: facts,
        findings: { advice: adviceFindings(facts) },
      };
    },
  };
  if (mempool) {
    toolbox.explain_transaction = async (args) => {
      const txid = (args.txid ?? '').toLowerCase();
      if (!/^[0-9a-f]{64}$/.test(txid))
        throw new StepFailure('bad_input', `txid ${args.txid} is not 64 hex characters`);
      const facts = await explainTransactionFacts({ reader: mempool, txid, market }).catch((e) =>
        asStepFailure(e, `transaction ${txid}`),
      );
      return {
        summary: transactionSummary(facts),
        evidence: facts,
        findings: { transaction: transactionFindings(facts) },
      };
    };
    toolbox.explain_block = async (args) => {
      const ref = (args.hash_or_height ?? '').toLowerCase();
      if (!/^(?:[0-9a-f]{64}|[0-9]{1,9})$/.test(ref))
        throw new StepFailure('bad_input', `${args.hash_or_height} is not a block hash or height`);
      const facts = await explainBlockFacts({ reader: mempool, hashOrHeight: ref, market }).catch((e) =>
        asStepFailure(e, `block ${ref}`),
      );
      const rates = facts.fee_rates_sat_vb;
      return {
        summary: `Block ${formatInt(facts.block.height)}${facts.block.pool ? ` (${facts.block.pool})` : ''} is ${facts.block.fullness_percent}% full with fees of ${formatSats(facts.fees.total_fee_sat)}${rates ? ` and a median rate of ${formatRate(rates.p50)}` : ''}.`,
        evidence: facts,
        findings: { block: blockFindings(facts) },
      };
    };
  }
  // The next block and the landscape run their resources' own reading and build (shared with the
  // paid routes, so one upstream fetch serves both), where this deployment can serve them.
  const bitcoin = capabilities.bitcoin;
  if (bitcoin && nextBlock.unavailable?.(capabilities) === undefined) {
    toolbox.next_block = async () =>
      nextBlockStep(
        await readNextBlock({ ...capabilities, bitcoin }).catch((e) => asStepFailure(e, 'the next block')),
      );
  }
  if (bitcoin && feeLandscape.unavailable?.(capabilities) === undefined) {
    toolbox.landscape = async () =>
      landscapeStep(
        await readFeeLandscape({ ...capabilities, bitcoin }).catch((e) =>
          asStepFailure(e, 'the fee landscape'),
        ),
      );
  }
  if (observatory) toolbox.observatory = () => observatoryStep(observatory);
  return toolbox;
}
