import { defineResource } from '../../kit';
import { PRICE_0_01 } from '../../shared/planned';
import { BROADCAST_REFUSALS, type BroadcastRefusalCode, broadcastChecked } from './flow';
import {
  BROADCAST_CHECK_CODES,
  type BroadcastCheckCode,
  inspectTransaction,
  parsesWithBtcSigner,
} from './inspect';
import { placementOf } from './placement';
import { BroadcastRequestSchema, BroadcastResultSchema } from './schema';

const CHECK_ERRORS = Object.fromEntries(
  Object.entries(BROADCAST_CHECK_CODES).map(([code, description]) => [
    code,
    { status: 400, retryable: false, description: `${description} Refused before any payment challenge.` },
  ]),
) as Record<BroadcastCheckCode, { status: 400; retryable: false; description: string }>;

type BroadcastErrorCode = BroadcastCheckCode | BroadcastRefusalCode;

/**
 * POST /api/v1/broadcast (0.01 USDC, body `{hex, allow_high_fee?}`): the transaction's local
 * checks before any challenge (each failure a 400 with its own code), then, once paid:
 * `testmempoolaccept` where Bitcoin Core is configured (else the prevouts, to know the fee), the
 * absurd-fee guard, and the broadcast through the primary upstream
 * (docs/fee-service-contract.md#post-apiv1broadcast). Only an accepted broadcast is charged: an
 * already-known transaction, a node's refusal or an upstream failure answers its error, never settled.
 */
export const broadcast = defineResource({
  method: 'POST',
  path: '/api/v1/broadcast',
  description: 'Broadcast of a signed transaction',
  price: PRICE_0_01,
  // Its handler acts or costs: one balance never pays for two runs (docs/reliability.md).
  gate: { reserveBalance: true },
  discovery: {
    category: 'transactions',
    keywords: ['bitcoin', 'transaction', 'broadcast'],
    operationId: 'broadcastTransaction',
  },
  input: { body: BroadcastRequestSchema },
  output: BroadcastResultSchema,
  errors: { ...CHECK_ERRORS, ...BROADCAST_REFUSALS },
  needs: ['bitcoin'],
  check(input) {
    const inspection = inspectTransaction(input.body.hex);
    return inspection.ok
      ? undefined
      : { code: inspection.code as BroadcastErrorCode, message: inspection.message };
  },
  async handler({ input, capabilities, env, fail }) {
    const inspection = inspectTransaction(input.body.hex);
    // The edge ran the same checks before the challenge; this only narrows the type.
    if (!inspection.ok) return fail(inspection.code, inspection.message);
    const { tx } = inspection;
    // A second opinion before anything is sent: the library's parser must read the same transaction.
    if (!parsesWithBtcSigner(input.body.hex, tx.txid)) {
      return fail(
        'transaction_unparsable',
        '@scure/btc-signer does not read this transaction as the checks did',
      );
    }
    const maxFeeRate = env.config.broadcast.maxFeeRateSatVb;
    const allowHighFee = input.body.allow_high_fee === true;
    const outcome = await broadcastChecked({
      upstreams: capabilities.bitcoin,
      tx,
      hex: input.body.hex.toLowerCase(),
      maxFeeRateSatVb: maxFeeRate,
      allowHighFee,
    });
    if ('refused' in outcome) return fail(outcome.refused, outcome.message, outcome.headers);
    const broadcastAt = new Date().toISOString();
    const next_block = await placementOf(capabilities.bitcoin, outcome.fee?.rateSatVb);
    return {
      status: 200,
      headers: { 'cache-control': 'no-store', 'x-transaction-id': tx.txid },
      body: {
        data: {
          txid: tx.txid,
          wtxid: tx.wtxid,
          size: tx.size,
          weight: tx.weight,
          vsize: tx.vsize,
          fee_sat: outcome.fee?.sat ?? null,
          fee_rate_sat_vb: outcome.fee?.rateSatVb ?? null,
          fee_basis: outcome.fee?.basis ?? 'unknown',
          broadcast_via: outcome.via,
          next_block,
        },
        meta: {
          broadcast_at: broadcastAt,
          source: outcome.source,
          checks: Object.keys(BROADCAST_CHECK_CODES),
          max_fee_rate_sat_vb: maxFeeRate,
          allow_high_fee: allowHighFee,
        },
      },
    };
  },
});
