/**
 * What a chat question asks to be computed. {@link recogniseComputations} reads the question alone
 * (it runs before the payment challenge: a question it recognises is in the domain);
 * {@link runComputations} computes against the live market. The rules are documented in
 * docs/ai-resources.md#what-the-chat-computes.
 */
import type { FeeMarket } from '../../market';
import { bump } from './bump';
import { blockTime, nextBlockRate, subsidy, targetRate } from './chain';
import { type Quantities, readQuantities } from './quantities';
import { amountUnits, dust, feeForSize, rateOfFee, rateUnits, tiersNamed, vsizeOf } from './sizes-and-rates';
import type { Computation, ComputationKind } from './types';

export type { Computation, ComputationKind, ComputedFigure } from './types';
export { COMPUTATION_KINDS } from './types';

const FEE_WORDS = /\b(?:fees?|costs?|costing|pay|paying|price|charge|how much)\b/;
const PAID_WORDS = /\b(?:paid|pays|paying|spent|fee\s+(?:of|is|was)|with\s+a\s+fee)\b/;
const CONVERT_WORDS =
  /\b(?:convert\w*|conversion|equals?|equivalent|in\s+(?:sats|satoshis|btc|bitcoin)|to\s+(?:sats|satoshis|btc)|how\s+many\s+(?:sats|satoshis|btc))\b|btc\/kvb|sats?\/kvb|sats?\/wu|\bkvb\b/;
const HOW_LONG =
  /\b(?:how\s+long|how\s+soon|when\s+(?:will|does|is)|time\s+(?:until|to|for|does)|takes?|wait)\b/;
const CHANCE_WORDS = /\b(?:chances?|probabilit\w*|likel\w*|odds|how\s+many\s+blocks|expect\w*)\b/;
const NEXT_BLOCK = /\bnext[\s-]block\b|\bfirst\s+block\b/;
const RATE_ASK = /\b(?:rates?|fees?|pay|needs?|takes?|costs?|enough|minimum|get\s+in|into|sat\/vb)\b/;
const SUBSIDY =
  /\b(?:subsid\w*|halving\w*|halvening|block\s+reward|coinbase\s+reward|miner\s+reward|issuance)\b/;
const RBF = /\brbf\b|\breplace[\s-]by[\s-]fee\b/;
const CPFP = /\bcpfp\b|\bchild[\s-]pays[\s-]for[\s-]parent\b/;
const BUMP = /\b(?:bump\w*|speed\s+up|accelerat\w*|unstick|stuck)\b/;
const COMPARE = /\b(?:or|vs\.?|versus|compare\w*|which|better|best|cheaper|how)\b/;
const DUST = /\bdust\b/;

export interface RecognisedQuestion {
  quantities: Quantities;
  kinds: ComputationKind[];
}

/** The calculations a question asks for, read from its words and quantities (no market needed). */
export function recogniseComputations(question: string): RecognisedQuestion {
  const q = readQuantities(question);
  const t = q.text;
  const kinds = new Set<ComputationKind>();
  const hasSize = q.sizes.length > 0 || q.shape !== undefined;
  const satAmount = q.amounts.some((a) => a.unit === 'sat');
  const numbers = q.rates.length + q.sizes.length + q.amounts.length > 0;
  const bumps =
    (RBF.test(t) && CPFP.test(t)) ||
    ((RBF.test(t) || CPFP.test(t) || BUMP.test(t)) && (COMPARE.test(t) || numbers));
  if (bumps) kinds.add('bump');
  if (DUST.test(t)) kinds.add('dust');
  if (SUBSIDY.test(t)) kinds.add('subsidy');
  const asksHowLong = HOW_LONG.test(t);
  const nextBlock = NEXT_BLOCK.test(t);
  if (
    (q.blocks.length > 0 && asksHowLong) ||
    (q.minutes.length > 0 && CHANCE_WORDS.test(t)) ||
    (nextBlock && asksHowLong && !RATE_ASK.test(t))
  )
    kinds.add('block_time');
  else if (nextBlock && RATE_ASK.test(t) && !bumps) kinds.add('next_block_rate');
  else if (q.blocks.length > 0 && RATE_ASK.test(t) && !bumps) kinds.add('target_rate');
  const sizeTaken = kinds.has('bump') || kinds.has('next_block_rate') || kinds.has('target_rate');
  if (
    !sizeTaken &&
    hasSize &&
    satAmount &&
    q.rates.length === 0 &&
    !kinds.has('dust') &&
    (PAID_WORDS.test(t) || FEE_WORDS.test(t))
  )
    kinds.add('rate_of_fee');
  const convertsRate =
    q.rates.length > 0 && (CONVERT_WORDS.test(t) || q.rates.some((r) => r.unit !== 'sat/vB'));
  if (convertsRate && !kinds.has('bump')) kinds.add('rate_units');
  if (
    !sizeTaken &&
    !kinds.has('rate_of_fee') &&
    ((hasSize && (q.rates.length > 0 || FEE_WORDS.test(t) || tiersNamed(t).length > 0)) ||
      (!hasSize && q.rates.length > 0 && FEE_WORDS.test(t) && !convertsRate))
  )
    kinds.add('fee_for_size');
  const weightAsked =
    q.sizes.some((s) => s.from === 'weight') ||
    (q.sizes.some((s) => s.from === 'vB') && /\bweight\b/.test(t));
  if (!sizeTaken && !kinds.has('fee_for_size') && !kinds.has('rate_of_fee') && (weightAsked || q.shape))
    kinds.add('vsize');
  const amountsUsed = ['fee_for_size', 'rate_of_fee', 'bump', 'dust'].some((k) =>
    kinds.has(k as ComputationKind),
  );
  if (q.amounts.length > 0 && !amountsUsed) kinds.add('amount_units');
  return { quantities: q, kinds: [...kinds] };
}

/** Runs the recognised calculations against the live market, in a fixed order. */
export function runComputations(recognised: RecognisedQuestion, market: FeeMarket): Computation[] {
  const q = recognised.quantities;
  const has = (k: ComputationKind) => recognised.kinds.includes(k);
  const out: (Computation | undefined)[] = [
    has('fee_for_size') ? feeForSize(q, market) : undefined,
    has('rate_of_fee') ? rateOfFee(q, market) : undefined,
    has('next_block_rate') ? nextBlockRate(q, market) : undefined,
    has('target_rate') ? targetRate(q, market) : undefined,
    has('bump') ? bump(q, market) : undefined,
    has('rate_units') ? rateUnits(q) : undefined,
    has('vsize') ? vsizeOf(q) : undefined,
    has('amount_units') ? amountUnits(q) : undefined,
    has('dust') ? dust(q) : undefined,
    has('block_time') ? blockTime(q, NEXT_BLOCK.test(q.text)) : undefined,
    has('subsidy') ? subsidy(q, market) : undefined,
  ];
  return out.filter((c): c is Computation => c !== undefined);
}
