import type {
  PaymentPayload,
  PaymentPayloadV1,
  PaymentRequirements,
  PaymentRequirementsV1,
  ReconcileResult,
  SettleResponse,
} from '@tollbooth/core';
import {
  type Address,
  type Chain,
  type Client,
  type Hash,
  isAddressEqual,
  parseEventLogs,
  type TransactionReceipt,
  type Transport,
} from 'viem';
import { getBlock, getLogs, getTransaction, getTransactionReceipt, readContract } from 'viem/actions';
import { type CheckedExactEvmRequest, checkRequest, toExactEvmRequest } from '../checks/exact-evm-request';
import { eip3009Abi } from '../constants';

const authorizationUsedEvent = eip3009Abi.find(
  (item): item is Extract<(typeof eip3009Abi)[number], { name: 'AuthorizationUsed' }> =>
    item.type === 'event' && item.name === 'AuthorizationUsed',
)!;

/** Blocks searched backwards for the `AuthorizationUsed` log when no transaction hash is known. */
export const DEFAULT_RECONCILE_LOOKBACK_BLOCKS = 50_000n;

/**
 * Blocks the chain must have mined at or past an authorization's `validBefore`, below its latest,
 * before an unused authorization counts as expired: a reorg shallower than this cannot bring back
 * a block that could still include the transfer.
 */
export const DEFAULT_EXPIRY_GRACE_BLOCKS = 5n;

export interface ReconcileExactEvmPaymentParameters {
  /** Any viem client with a transport to the payment's network. */
  client: Client<Transport, Chain | undefined>;
  payload: PaymentPayload | PaymentPayloadV1;
  requirements: PaymentRequirements | PaymentRequirementsV1;
  /** Hash of a settlement transaction already broadcast (from `settlement_pending`). */
  transaction?: string | undefined;
  /** How far back to look for the authorization's logs. Default {@link DEFAULT_RECONCILE_LOOKBACK_BLOCKS}. */
  lookbackBlocks?: bigint | undefined;
  /** Grace before an unused authorization counts as expired. Default {@link DEFAULT_EXPIRY_GRACE_BLOCKS}. */
  expiryGraceBlocks?: bigint | undefined;
}
export type ReconcileExactEvmPaymentReturnType = ReconcileResult;

/**
 * Finds out on chain what happened to a payment whose settlement outcome is unknown. Reads
 * `authorizationState(from, nonce)`: when the authorization was used, returns the settlement
 * receipt of the transaction that used it (the known transaction, or the one found through the
 * `AuthorizationUsed` and `Transfer` logs); when it was not used, `unsettled`, or `expired` once
 * the chain's own time is past `validBefore` by `expiryGraceBlocks` blocks (the token refuses the
 * transfer in any block at or past it; the server's clock decides nothing). A known transaction
 * still waiting in the mempool gives `unknown`, so the caller does not broadcast a second one.
 *
 * @example
 * const result = await reconcileExactEvmPayment({ client, payload, requirements, transaction });
 */
export async function reconcileExactEvmPayment(
  parameters: ReconcileExactEvmPaymentParameters,
): Promise<ReconcileExactEvmPaymentReturnType> {
  const { client, payload, requirements, transaction } = parameters;
  const lookback = parameters.lookbackBlocks ?? DEFAULT_RECONCILE_LOOKBACK_BLOCKS;
  const grace = parameters.expiryGraceBlocks ?? DEFAULT_EXPIRY_GRACE_BLOCKS;
  const checked = checkRequest(toExactEvmRequest(payload, requirements));
  if (!checked.ok) return { status: 'unknown', message: `${checked.reason}: ${checked.message}` };
  const request = checked.request;
  const { from, nonce } = request.payload.authorization;
  try {
    if (transaction && /^0x[0-9a-fA-F]{64}$/.test(transaction)) {
      const receipt = await getTransactionReceipt(client, { hash: transaction as Hash }).catch(
        () => undefined,
      );
      if (receipt && receiptSettles(receipt, request)) return settled(request, receipt.transactionHash);
    }
    // One block for both questions: the authorization's state and the chain's time.
    const head = await getBlock(client, { blockTag: 'latest' });
    const used = await readContract(client, {
      address: request.assetAddress,
      abi: eip3009Abi,
      functionName: 'authorizationState',
      args: [from, nonce],
      blockNumber: head.number,
    });
    if (!used) {
      if (transaction && /^0x[0-9a-fA-F]{64}$/.test(transaction)) {
        const pending = await getTransaction(client, { hash: transaction as Hash }).catch(() => undefined);
        if (pending && pending.blockNumber === null) {
          return { status: 'unknown', message: `transaction ${transaction} is broadcast but not mined yet` };
        }
      }
      const validBefore = BigInt(request.payload.authorization.validBefore);
      return (await expiredOnChain(client, head, validBefore, grace))
        ? { status: 'expired' }
        : { status: 'unsettled' };
    }
    const latest = head.number;
    const logs = await getLogs(client, {
      address: request.assetAddress,
      event: authorizationUsedEvent,
      args: { authorizer: from, nonce },
      fromBlock: latest > lookback ? latest - lookback : 0n,
      toBlock: latest,
    });
    for (const log of logs) {
      if (!log.transactionHash) continue;
      const receipt = await getTransactionReceipt(client, { hash: log.transactionHash });
      if (receiptSettles(receipt, request)) return settled(request, receipt.transactionHash);
    }
    return {
      status: 'unknown',
      message: `authorization ${nonce} of ${from} is used, but no matching Transfer was found in the last ${lookback} blocks`,
    };
  } catch (error) {
    return { status: 'unknown', message: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * Whether no block can include the transfer any more: the block `grace` below the head is already
 * at or past `validBefore` (so is every block after it).
 */
async function expiredOnChain(
  client: ReconcileExactEvmPaymentParameters['client'],
  head: { number: bigint; timestamp: bigint },
  validBefore: bigint,
  grace: bigint,
): Promise<boolean> {
  if (head.timestamp < validBefore) return false;
  if (grace <= 0n) return true;
  if (head.number < grace) return false;
  const deep = await getBlock(client, { blockNumber: head.number - grace });
  return deep.timestamp >= validBefore;
}

/** A successful receipt that used this authorization and carries Transfer(from, to, value). */
function receiptSettles(receipt: TransactionReceipt, request: CheckedExactEvmRequest): boolean {
  if (receipt.status !== 'success') return false;
  const { from, to, value, nonce } = request.payload.authorization;
  const tokenLogs = receipt.logs.filter((log) => isAddressEqual(log.address, request.assetAddress));
  const events = parseEventLogs({ abi: eip3009Abi, logs: tokenLogs });
  const used = events.some(
    (event) =>
      event.eventName === 'AuthorizationUsed' &&
      isAddressEqual(event.args.authorizer, from) &&
      event.args.nonce.toLowerCase() === nonce.toLowerCase(),
  );
  return used && hasTransfer(events, from, to, BigInt(value));
}

function hasTransfer(
  events: ReturnType<typeof parseEventLogs<typeof eip3009Abi>>,
  from: Address,
  to: Address,
  value: bigint,
): boolean {
  return events.some(
    (event) =>
      event.eventName === 'Transfer' &&
      isAddressEqual(event.args.from, from) &&
      isAddressEqual(event.args.to, to) &&
      event.args.value === value,
  );
}

function settled(request: CheckedExactEvmRequest, transaction: string): ReconcileResult {
  const receipt: SettleResponse = {
    success: true,
    transaction,
    network: request.wireNetwork,
    payer: request.payload.authorization.from,
    amount: request.payload.authorization.value,
  };
  return { status: 'settled', receipt };
}
