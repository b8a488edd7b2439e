import * as z from 'zod';
import { transactionProse } from '../../../analysis/transaction/prose';
import { writeProse } from '../../../capabilities/language-model/prose';
import { defineResource } from '../../kit';
import { TxidSchema } from '../../shared/inputs';
import { PRICE_0_01 } from '../../shared/planned';
import {
  AI_ERROR_CODES,
  aiAnswer,
  aiRateLimit,
  readMarket,
  requireSnapshot,
  upstreamFailure,
} from '../shared/answer';
import { explainTransactionFacts } from '../shared/chain';
import { ExplainTransactionBodySchema } from './schema';

export const EXPLAIN_TRANSACTION_ALGORITHM = 'explain-transaction-v1';

/**
 * GET /api/v1/ai/explain/transaction/:txid (0.01): the transaction's facts measured from its raw
 * bytes and prevouts, against today's fee market, and prose written from them (docs/ai-resources.md).
 */
export const explainTransaction = defineResource({
  method: 'GET',
  path: '/api/v1/ai/explain/transaction/:txid',
  description: 'Transaction explainer',
  price: PRICE_0_01,
  discovery: {
    category: 'ai',
    keywords: ['bitcoin', 'transaction', 'explain', 'ai'],
    operationId: 'explainTransaction',
  },
  input: { pathParams: z.strictObject({ txid: TxidSchema }) },
  output: ExplainTransactionBodySchema,
  errors: {
    unknown_transaction: AI_ERROR_CODES.unknown_transaction,
    upstream_unavailable: AI_ERROR_CODES.upstream_unavailable,
    no_validated_snapshot: AI_ERROR_CODES.no_validated_snapshot,
  },
  needs: ['snapshots', 'bitcoin'],
  unavailable: (capabilities) =>
    capabilities.bitcoin?.mempool
      ? undefined
      : 'needs a mempool.space-dialect upstream (MEMPOOL_URL) for transactions',
  rateLimit: aiRateLimit,
  precondition: requireSnapshot,
  async handler({ input, capabilities, requestId, fail }) {
    const read = readMarket(capabilities, requestId);
    if ('error' in read) return read.error;
    let facts: Awaited<ReturnType<typeof explainTransactionFacts>>;
    try {
      facts = await explainTransactionFacts({
        reader: capabilities.bitcoin.mempool!,
        txid: input.params.txid.toLowerCase(),
        market: read.market,
      });
    } catch (error) {
      return upstreamFailure(error, 'unknown_transaction', fail);
    }
    const prose = await writeProse({
      model: capabilities.languageModel,
      subject: 'this Bitcoin transaction',
      facts,
      deterministic: transactionProse(facts),
    });
    return aiAnswer({ reading: read.reading, algorithm: EXPLAIN_TRANSACTION_ALGORITHM, facts, prose });
  },
});
