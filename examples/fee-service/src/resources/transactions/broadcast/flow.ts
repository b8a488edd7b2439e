import type { BitcoinUpstreams } from '../../../capabilities/bitcoin';
import type { UpstreamKind } from '../../../config';
import { FeeServiceError } from '../../../domain/errors';
import { roundRate3 } from '../../../domain/fee-math';
import { BroadcastRejectedError, CoreRpcError, UpstreamNotFoundError } from '../../../upstreams/errors';
import type { InspectedTransaction } from './inspect';

/**
 * What happens to a checked transaction after the payment is verified: is it already known, what
 * does it pay, is that absurd, then the broadcast itself. Each step answers a {@link Refusal}
 * (any status ≥ 400 is never settled) or goes on; the last answers what was broadcast.
 */

/** The flow's own refusals, with their HTTP status. */
export const BROADCAST_REFUSALS = {
  already_known: {
    status: 409,
    retryable: false,
    description:
      'The node already has this transaction in its mempool; it was not sent again and nothing was charged.',
  },
  already_in_chain: {
    status: 409,
    retryable: false,
    description: 'The transaction is already confirmed (Core -27); nothing was charged.',
  },
  inputs_missing_or_spent: {
    status: 409,
    retryable: false,
    description: 'An input is unknown or already spent (Core -25); nothing was charged.',
  },
  node_rejected: {
    status: 422,
    retryable: false,
    description:
      "The node refused the transaction by policy (Core -26); the node's reason is in the message; nothing was charged.",
  },
  node_decode_failed: {
    status: 400,
    retryable: false,
    description: 'The node could not decode the transaction (Core -22); nothing was charged.',
  },
  fee_rate_too_high: {
    status: 422,
    retryable: false,
    description:
      'The fee rate is above the absurd-fee limit; send allow_high_fee: true to broadcast it anyway. Nothing was charged.',
  },
  fee_unknown: {
    status: 422,
    retryable: false,
    description:
      'The fee could not be computed (too many inputs to look up); send allow_high_fee: true to broadcast without the absurd-fee check. Nothing was charged.',
  },
  upstream_warming_up: {
    status: 503,
    retryable: true,
    description: 'The node is starting (Core -28); retry later. Nothing was charged.',
  },
  upstream_unavailable: {
    status: 503,
    retryable: true,
    description:
      'The Bitcoin upstream did not answer; nothing was charged (the transaction may or may not have reached it: a retry answers already_known if it did).',
  },
} as const;
export type BroadcastRefusalCode = keyof typeof BROADCAST_REFUSALS;

export interface Refusal {
  refused: BroadcastRefusalCode;
  message: string;
  headers?: Record<string, string>;
}

export interface Broadcasted {
  fee: { sat: number; rateSatVb: number; basis: 'testmempoolaccept' | 'prevouts' } | undefined;
  via: 'mempool.space' | 'esplora' | 'bitcoin-core';
  source: string;
}

/** Distinct parent transactions looked up for the fee at most; past that the fee is unknown. */
export const MAX_PREVOUT_LOOKUPS = 100;
const LOOKUP_CONCURRENCY = 8;
const DIALECT_NAMES: Record<UpstreamKind, Broadcasted['via']> = {
  mempool: 'mempool.space',
  esplora: 'esplora',
  core: 'bitcoin-core',
};

const known = (txid: string, code: 'already_known' | 'already_in_chain'): Refusal => ({
  refused: code,
  message:
    code === 'already_known'
      ? `transaction ${txid} is already in the node's mempool: not sent again, nothing charged`
      : `transaction ${txid} is already confirmed: not sent again, nothing charged`,
  headers: { 'x-transaction-id': txid },
});

/**
 * The node's reason as it gave it, the detail kept (`min relay fee not met, 100 < 141`), with the
 * two numbers of a relay-fee refusal said in words: the fee paid and the fee the relay minimum asks.
 */
export function nodeReason(reason: string): string {
  const fee = /^(?:min relay fee not met|mempool min fee not met), (\d+) < (\d+)$/.exec(reason);
  return fee
    ? `${reason} (it pays ${fee[1]} sats; the node's minimum for its size is ${fee[2]} sats)`
    : reason;
}

/** A node's refusal (Core code and message, from RPC or a mempool.space text) as the resource answers it. */
export function refusalOfNode(code: number | undefined, raw: string, txid: string): Refusal {
  const message = nodeReason(raw);
  switch (code) {
    case -25:
      return { refused: 'inputs_missing_or_spent', message: `the node refused it: ${message}` };
    case -26:
      return { refused: 'node_rejected', message: `the node refused it: ${message}` };
    case -27:
      return known(txid, 'already_in_chain');
    case -22:
      return { refused: 'node_decode_failed', message: `the node could not decode it: ${message}` };
    case -28:
      return {
        refused: 'upstream_warming_up',
        message: `the node is warming up: ${message}`,
        headers: { 'retry-after': '30' },
      };
    default:
      return {
        refused: 'node_rejected',
        message: `the node refused it${code === undefined ? '' : ` (${code})`}: ${message}`,
      };
  }
}

/**
 * testmempoolaccept's verdict as the resource answers it: its `reject-reason` decides the code, its
 * `reject-details` (Core ≥ 29: the full message, `min relay fee not met, 100 < 141`) is the message
 * when given — the detail is kept.
 */
function refusalOfRejectReason(reason: string, details: string | undefined, txid: string): Refusal {
  if (reason === 'txn-already-in-mempool') return known(txid, 'already_known');
  if (reason === 'txn-already-known') return known(txid, 'already_in_chain');
  const message = `the node refused it: ${nodeReason(details || reason)}`;
  if (reason === 'missing-inputs' || reason.startsWith('bad-txns-inputs')) {
    return { refused: 'inputs_missing_or_spent', message };
  }
  return { refused: 'node_rejected', message };
}

function unavailable(error: unknown): Refusal {
  if (error instanceof CoreRpcError && error.rpcCode === -28) {
    return refusalOfNode(-28, error.rpcMessage, '');
  }
  return {
    refused: 'upstream_unavailable',
    message: error instanceof Error ? error.message : String(error),
    headers: { 'retry-after': '10' },
  };
}

/** Runs `work` over `items`, `limit` at a time. */
async function inBatches<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        out[index] = await work(items[index]!);
      }
    }),
  );
  return out;
}

/**
 * The fee from the prevouts, read from the Esplora dialect (`/tx/:txid` of each parent). An
 * unknown parent, or an output index past its outputs, means the input does not exist.
 */
async function feeFromPrevouts(
  upstreams: BitcoinUpstreams,
  tx: InspectedTransaction,
): Promise<{ fee: number } | { unknown: true } | Refusal> {
  const reader = upstreams.mempool ?? upstreams.esplora;
  if (!reader) return { unknown: true };
  const parents = [...new Set(tx.inputs.map((input) => input.txid))];
  if (parents.length > MAX_PREVOUT_LOOKUPS) return { unknown: true };
  const fetched = await inBatches(parents, LOOKUP_CONCURRENCY, async (txid) => {
    try {
      return [txid, await reader.fetchTransaction(txid)] as const;
    } catch (error) {
      if (error instanceof UpstreamNotFoundError) return [txid, undefined] as const;
      throw error;
    }
  });
  const byTxid = new Map(fetched);
  let total = 0n;
  for (const input of tx.inputs) {
    const output = byTxid.get(input.txid)?.vout[input.vout];
    if (!output) {
      return {
        refused: 'inputs_missing_or_spent',
        message: `input ${input.txid}:${input.vout} does not exist`,
      };
    }
    total += BigInt(output.value);
  }
  return { fee: Number(total - tx.outputs.reduce((sum, o) => sum + o.value, 0n)) };
}

/** Bitcoin Core's verdict without broadcasting, with the fee it computed; never retried. */
async function testAccept(
  upstreams: BitcoinUpstreams,
  tx: InspectedTransaction,
  hex: string,
): Promise<{ fee: number } | Refusal> {
  const [result] = await upstreams.core!.testMempoolAccept([hex], { maxFeeRateBtcPerKvb: 0 });
  if (!result) return { refused: 'upstream_unavailable', message: 'testmempoolaccept answered no result' };
  if (result.allowed && result.fees) return { fee: Math.round(result.fees.base * 1e8) };
  return refusalOfRejectReason(result['reject-reason'] ?? 'rejected', result['reject-details'], tx.txid);
}

/**
 * Already known, fee and absurd-fee guard, then the broadcast through the primary upstream.
 * `maxFeeRateSatVb` is the guard (config `BROADCAST_MAX_FEE_RATE`); `allowHighFee` lifts it and
 * Core's own limit.
 */
export async function broadcastChecked(options: {
  upstreams: BitcoinUpstreams;
  tx: InspectedTransaction;
  hex: string;
  maxFeeRateSatVb: number;
  allowHighFee: boolean;
}): Promise<Broadcasted | Refusal> {
  const { upstreams, tx, hex } = options;
  let fee: Broadcasted['fee'];
  try {
    if (upstreams.core) {
      const verdict = await testAccept(upstreams, tx, hex);
      if ('refused' in verdict) return verdict;
      fee = { sat: verdict.fee, rateSatVb: roundRate3(verdict.fee / tx.vsize), basis: 'testmempoolaccept' };
    } else {
      const reader = upstreams.mempool ?? upstreams.esplora;
      const existing = await reader!.fetchTransaction(tx.txid).catch((error: unknown) => {
        if (error instanceof UpstreamNotFoundError) return undefined;
        throw error;
      });
      if (existing) return known(tx.txid, existing.status.confirmed ? 'already_in_chain' : 'already_known');
      const prevouts = await feeFromPrevouts(upstreams, tx);
      if ('refused' in prevouts) return prevouts;
      if ('fee' in prevouts) {
        fee = { sat: prevouts.fee, rateSatVb: roundRate3(prevouts.fee / tx.vsize), basis: 'prevouts' };
      }
    }
  } catch (error) {
    if (error instanceof CoreRpcError && error.rpcCode === -22)
      return refusalOfNode(-22, error.rpcMessage, tx.txid);
    if (error instanceof FeeServiceError || error instanceof Error) return unavailable(error);
    throw error;
  }
  if (!options.allowHighFee) {
    if (!fee) {
      return {
        refused: 'fee_unknown',
        message: `the fee could not be computed (more than ${MAX_PREVOUT_LOOKUPS} parent transactions to look up); send allow_high_fee: true to broadcast without the absurd-fee check`,
      };
    }
    if (fee.rateSatVb > options.maxFeeRateSatVb) {
      return {
        refused: 'fee_rate_too_high',
        message: `fee rate ${fee.rateSatVb} sat/vB (fee ${fee.sat} sats) is above the limit of ${options.maxFeeRateSatVb} sat/vB; send allow_high_fee: true to broadcast it anyway`,
      };
    }
  }

  const kind = upstreams.primary;
  try {
    if (kind === 'core') {
      await upstreams.core!.sendRawTransaction(hex, options.allowHighFee ? { maxFeeRateBtcPerKvb: 0 } : {});
    } else {
      await upstreams[kind]!.broadcastTransaction(hex);
    }
  } catch (error) {
    if (error instanceof BroadcastRejectedError)
      return refusalOfNode(error.rpcCode, error.rpcMessage, tx.txid);
    return unavailable(error);
  }
  return { fee, via: DIALECT_NAMES[kind], source: upstreams[kind]!.source };
}
