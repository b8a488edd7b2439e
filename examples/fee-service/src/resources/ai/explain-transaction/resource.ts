import * as z from 'zod';
import { transactionProse } from '../../../analysis/transaction/prose';
import { defineResource } from '../../kit';
import { TxidSchema } from '../../shared/inputs';
import { PRICE_0_01 } from '../../shared/planned';
import { AI_ERROR_CODES, aiRateLimit, requireSnapshot } from '../shared/answer';
import { explainTransactionFacts, replacedAnswer, replacementOf } from '../shared/chain';
import { explainer, needsMempoolDialect } from '../shared/explain';
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
  // Its handler acts or costs: one balance never pays for two runs (docs/reliability.md).
  gate: { reserveBalance: true },
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
  unavailable: needsMempoolDialect('transactions'),
  rateLimit: aiRateLimit,
  precondition: requireSnapshot,
  handler: explainer({
    param: 'txid',
    subject: 'this Bitcoin transaction',
    algorithm: EXPLAIN_TRANSACTION_ALGORITHM,
    notFound: 'unknown_transaction',
    facts: (reader, txid, market) => explainTransactionFacts({ reader, txid, market }),
    prose: transactionProse,
    // Not known because it was replaced (RBF): the 404 says by which transaction.
    async whenNotFound(reader, txid, fail) {
      const replacement = await replacementOf(reader, txid);
      if (!replacement) return undefined;
      const { message, headers } = replacedAnswer(txid, replacement);
      return fail('unknown_transaction', message, headers);
    },
  }),
});
