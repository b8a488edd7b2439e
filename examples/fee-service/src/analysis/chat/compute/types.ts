/** What the chat computed for a question: one entry per calculation it recognised. */

export const COMPUTATION_KINDS = [
  'fee_for_size',
  'rate_of_fee',
  'rate_units',
  'vsize',
  'amount_units',
  'dust',
  'block_time',
  'next_block_rate',
  'target_rate',
  'subsidy',
  'bump',
] as const;
export type ComputationKind = (typeof COMPUTATION_KINDS)[number];

export interface ComputedFigure {
  name: string;
  value: number;
  unit: string;
}

export interface Computation {
  kind: ComputationKind;
  /** The figures it was computed from, stated or live. */
  inputs: ComputedFigure[];
  results: ComputedFigure[];
  /** The rule, as a formula in words. */
  rule: string;
  /** What the question did not say and was assumed, or what the figures do not promise. */
  assumptions: string[];
  /** The answer in one or two sentences. */
  text: string;
}
