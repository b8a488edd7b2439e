/**
 * Named constants of the send-wait-v1 decision (`docs/fee-rules.md#send-wait-v1`,
 * `docs/fee-service-contract.md#versioning`). They are published in the documentation and in {@link LIMITATIONS}.
 */

/** Smallest fastest − economy gap, in sat/vB, that counts as a meaningful saving. */
export const MEANINGFUL_MIN_SAT_VB = 2;
/** Smallest saving, in percent of the fastest rate, that counts as meaningful. */
export const MEANINGFUL_MIN_PERCENT = 25;
/** Projected blocks of backlog from which the backlog is reported as heavy. */
export const HEAVY_BACKLOG_BLOCKS = 8;
/** The algorithm label of the decision (docs/fee-service-contract.md#versioning). */
export const ALGORITHM_VERSION = 'send-wait-v1';

/** Virtual size used for the illustrative fee: a one-input, two-output P2WPKH payment. */
export const ILLUSTRATION_VBYTES = 140;
/** Virtual size of one block: 4,000,000 weight units. */
export const BLOCK_VSIZE = 1_000_000;

/** Decision values and reason codes of send-wait-v1. */
export const DECISIONS = ['send', 'wait'] as const;
export type Decision = (typeof DECISIONS)[number];
export const REASON_CODES = [
  'meaningful_fee_curve_savings',
  'heavy_backlog',
  'limited_wait_savings',
] as const;
export type ReasonCode = (typeof REASON_CODES)[number];

/**
 * The `limitations` strings of every FeeDecision. They name the constants the decision uses and
 * say plainly what the answer is not.
 */
export const LIMITATIONS: readonly string[] = Object.freeze([
  'Timing targets and potential savings are illustrations, not guarantees: no confirmation time or fee is promised.',
  'Fees can rise while waiting; a wait decision can end up costing more than sending now.',
  `${ALGORITHM_VERSION} answers wait only when waiting saves at least ${MEANINGFUL_MIN_SAT_VB} sat/vB and at least ${MEANINGFUL_MIN_PERCENT}% of the fastest rate (fastest minus economy tier).`,
  `A backlog of ${HEAVY_BACKLOG_BLOCKS} or more projected blocks is reported as heavy_backlog; a single snapshot shows no trend, so backlog alone never answers wait.`,
  'The decision is computed from one validated upstream mempool snapshot; check meta.stale and meta.fetched_at before use.',
  `Illustrative fees use ${ILLUSTRATION_VBYTES} vB (a one-input, two-output P2WPKH payment) and round up to whole sats.`,
]);
