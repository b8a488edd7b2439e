import * as z from 'zod';
import { adviseFee } from '../../../analysis/advice/analyze';
import { URGENCIES, URGENCY_HORIZON_BLOCKS } from '../../../analysis/advice/context-words';
import { adviceProse } from '../../../analysis/advice/prose';
import { writeProse } from '../../../capabilities/language-model/prose';
import { defineResource } from '../../kit';
import { PRICE_0_01 } from '../../shared/planned';
import { AI_ERROR_CODES, aiAnswer, aiRateLimit, readMarket, requireSnapshot } from '../shared/answer';
import { EVIDENCE_WINDOW_HOURS, OBSERVATORY_SOURCE, observatoryOf, recentFloor } from '../shared/observatory';
import { FeeAdviceBodySchema } from './schema';

export const FEE_ADVICE_ALGORITHM = 'fee-advice-v1';

/** A query amount as whole sats: BTC with at most 8 decimals (rounded once, exactly, to sats). */
export function amountSatOf(amountBtc: number): number | null {
  const sats = Math.round(amountBtc * 1e8);
  return sats > 0 && Math.abs(sats / 1e8 - amountBtc) <= amountBtc * 4 * Number.EPSILON ? sats : null;
}

export const FeeAdviceQuerySchema = z.strictObject({
  urgency: z.enum(URGENCIES).optional().describe('How soon the transaction should confirm'),
  amount_btc: z.coerce
    .number()
    .positive()
    .max(21_000_000)
    .refine((btc) => amountSatOf(btc) !== null, 'must have at most 8 decimals')
    .optional()
    .describe('Amount to send, in BTC'),
  context: z.string().max(500).optional().describe('Free-text context for the advice'),
});

/**
 * GET /api/v1/ai/fees/advice (0.01): the rate for an urgency's horizon, the fee at the assumed size,
 * send or wait, savings, the share of the amount, and a confidence from the observatory where it
 * has evidence (docs/ai-resources.md#fee-advice).
 */
export const feeAdvice = defineResource({
  method: 'GET',
  path: '/api/v1/ai/fees/advice',
  description: 'Fee optimization recommendation (AI)',
  price: PRICE_0_01,
  // Its handler acts or costs: one balance never pays for two runs (docs/reliability.md).
  gate: { reserveBalance: true },
  discovery: { category: 'ai', keywords: ['bitcoin', 'fees', 'advice', 'ai'], operationId: 'getFeeAdvice' },
  input: { queryParams: FeeAdviceQuerySchema },
  output: FeeAdviceBodySchema,
  errors: { no_validated_snapshot: AI_ERROR_CODES.no_validated_snapshot },
  needs: ['snapshots', 'bitcoin'],
  rateLimit: aiRateLimit,
  precondition: requireSnapshot,
  async handler({ input, capabilities, requestId }) {
    const read = readMarket(capabilities, requestId);
    if ('error' in read) return read.error;
    const { urgency, amount_btc, context } = input.query;
    const observatory = observatoryOf(capabilities);
    const probe = adviseFee({
      market: read.market,
      ...(urgency ? { urgency } : {}),
      ...(context !== undefined ? { context } : {}),
    });
    const source = OBSERVATORY_SOURCE[capabilities.bitcoin.primary];
    const [floor, hit] = await Promise.all([
      recentFloor(capabilities, read.market.tiers.minimum),
      observatory
        ?.hitRate(source, URGENCY_HORIZON_BLOCKS[probe.urgency], EVIDENCE_WINDOW_HOURS)
        .catch(() => undefined),
    ]);
    const facts = adviseFee({
      market: read.market,
      ...(urgency ? { urgency } : {}),
      ...(context !== undefined ? { context } : {}),
      ...(amount_btc !== undefined ? { amountSat: amountSatOf(amount_btc)! } : {}),
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
    const prose = await writeProse({
      model: capabilities.languageModel,
      subject: 'this fee advice',
      facts,
      deterministic: adviceProse(facts),
      ...(context ? { question: context } : {}),
    });
    return aiAnswer({ reading: read.reading, algorithm: FEE_ADVICE_ALGORITHM, facts, prose });
  },
});
