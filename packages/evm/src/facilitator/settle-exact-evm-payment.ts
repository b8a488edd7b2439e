import type {
  PaymentPayload,
  PaymentPayloadV1,
  PaymentRequirements,
  PaymentRequirementsV1,
  SettleResponse,
} from '@tollbooth/core';
import {
  type Account,
  type Chain,
  type Client,
  encodeFunctionData,
  type Hash,
  type TransactionReceipt,
  TransactionReceiptNotFoundError,
  type Transport,
} from 'viem';
import { estimateContractGas, getTransactionReceipt, simulateContract } from 'viem/actions';
import {
  classifyTransferRevert,
  diagnoseTransferFailure,
  isTransportError,
  transferArgs,
  unknownOutcome,
} from '../checks/chain-checks';
import { type CheckedExactEvmRequest, checkRequest, toExactEvmRequest } from '../checks/exact-evm-request';
import { ExactEvmReason, eip3009Abi } from '../constants';
import { settlementStateOf } from '../sending/client-state';
import { verifyExactEvmRequest } from './verify-exact-evm-payment';

/** Milliseconds to wait for the settlement receipt before answering `settlement_pending`. */
export const DEFAULT_RECEIPT_TIMEOUT_MS = 30_000;

/**
 * Gas limit from an estimate: half again, at least 30 000 more. Transfers of one asset differ by a
 * cold recipient or payer slot (about 20 000 gas); only the gas used is paid.
 */
export function withHeadroom(estimate: bigint): bigint {
  const extra = estimate / 2n;
  return estimate + (extra > 30_000n ? extra : 30_000n);
}

export interface SettleExactEvmPaymentParameters {
  /**
   * A client on the payment's network whose account pays the gas. Every settlement through one
   * client object shares one sender: local nonces, one broadcast at a time, one receipt poller.
   */
  client: Client<Transport, Chain | undefined, Account>;
  payload: PaymentPayload | PaymentPayloadV1;
  /** The server's own requirement. */
  requirements: PaymentRequirements | PaymentRequirementsV1;
  /** Default {@link DEFAULT_RECEIPT_TIMEOUT_MS}. */
  receiptTimeoutMs?: number | undefined;
  /** Receipt polling interval. Default: the client's. */
  pollingIntervalMs?: number | undefined;
  /**
   * Run the transfer with `eth_call` right before sending it, so a payment that would revert is
   * refused and nothing is broadcast. Default true. Pass false only when this exact payment was
   * simulated a moment ago (the facilitator does, after its own verify). When the gas limit has to
   * be estimated, the estimate is the simulation.
   */
  simulate?: boolean | undefined;
  /** Unix seconds. Default: the clock. */
  now?: number | undefined;
}
export type SettleExactEvmPaymentReturnType = SettleResponse;

/**
 * Settles an exact EVM payment: re-runs the local checks, simulates the transfer (see `simulate`),
 * sends `transferWithAuthorization` (the `v, r, s` form for 65-byte signatures, the `bytes` form
 * otherwise) with a gas limit from a cached per-asset estimate, waits for the receipt and checks
 * its status and its `Transfer(from, to, value)` log. A reverted transfer is diagnosed from the
 * token (or as out of gas, which drops the cached estimate).
 * When the receipt does not arrive in time the answer is `settlement_pending` with the hash of the
 * broadcast transaction: reconcile it later, never send it again. Settled again through the same
 * client, such a payment waits for that transaction instead of sending a second one.
 *
 * @throws {FacilitatorError} when the node does not answer before anything was broadcast.
 * @example
 * const receipt = await settleExactEvmPayment({ client: walletClient, payload, requirements });
 */
export async function settleExactEvmPayment(
  parameters: SettleExactEvmPaymentParameters,
): Promise<SettleExactEvmPaymentReturnType> {
  const { client, payload, requirements } = parameters;
  const base = toExactEvmRequest(payload, requirements);
  const network = base.wireNetwork;
  const timeoutMs = parameters.receiptTimeoutMs ?? DEFAULT_RECEIPT_TIMEOUT_MS;
  const state = settlementStateOf(client, { pollingIntervalMs: parameters.pollingIntervalMs });
  const { sender } = state;
  // Looked up before the checks: a payment now too close to its validBefore fails them, while its
  // transaction may still land.
  const checked = checkRequest(base);
  const paymentKey = checked.ok ? paymentKeyOf(checked.request) : undefined;
  const earlier = paymentKey ? state.unconfirmed(paymentKey) : undefined;
  if (checked.ok && paymentKey && earlier) {
    // This payment's transaction answered settlement_pending: it may still land (the sender keeps
    // it alive), and a second one would then revert. Its receipt, or still pending; only once it is
    // neither kept alive nor mined (dropped, its nonce taken) is the payment sent again.
    let receipt: TransactionReceipt | null | undefined;
    if (sender.isPending(earlier.hash)) receipt = await sender.waitForReceipt(earlier.hash, timeoutMs);
    else {
      try {
        receipt = await getTransactionReceipt(client, { hash: earlier.hash });
      } catch (error) {
        if (!(error instanceof TransactionReceiptNotFoundError)) throw unknownOutcome('settle', error);
      }
    }
    const context = { client, request: checked.request, network };
    if (receipt) {
      state.forgetUnconfirmed(paymentKey);
      return settlementOutcome(context, receipt, earlier.hash, earlier.gas, undefined);
    }
    if (sender.isPending(earlier.hash)) return pendingAnswer(context, earlier.hash, timeoutMs);
    state.forgetUnconfirmed(paymentKey);
  }
  let verified: Awaited<ReturnType<typeof verifyExactEvmRequest>>;
  try {
    verified = await verifyExactEvmRequest({
      client,
      payload,
      requirements,
      now: parameters.now,
      simulate: false,
    });
  } catch (error) {
    if (isTransportError(error)) throw unknownOutcome('settle', error);
    throw error;
  }
  if (!verified.ok) {
    return {
      success: false,
      errorReason: verified.reason,
      ...(verified.message ? { errorMessage: verified.message } : {}),
      ...(verified.payer ? { payer: verified.payer } : {}),
      transaction: '',
      network,
    };
  }
  const { request, signature } = verified;
  const context = { client, request, network };
  const args = transferArgs(request, signature);
  const failure = (reason: string, message: string) => failed(context, reason, message);
  // The v, r, s form costs about the same for every payment of an asset: one estimate, with
  // headroom, serves them all for a while. Other signatures (ERC-1271 wallets) run wallet code of
  // any cost: estimated each time.
  const gasKey = signature.length === 132 ? `${request.chainId}:${request.assetAddress}` : undefined;
  let gas = gasKey ? state.gasLimit(gasKey) : undefined;
  try {
    if (gas === undefined) {
      // The estimate runs the transfer, so it also refuses a payment that would revert.
      const estimate = await estimateContractGas(client, {
        address: request.assetAddress,
        abi: eip3009Abi,
        functionName: 'transferWithAuthorization',
        args: args as never,
        account: client.account,
      });
      gas = withHeadroom(estimate);
      if (gasKey) state.rememberGasLimit(gasKey, gas);
    } else if (parameters.simulate !== false) {
      // A revert lands in the catch below, diagnosed like a failed estimate.
      await simulateContract(client, {
        address: request.assetAddress,
        abi: eip3009Abi,
        functionName: 'transferWithAuthorization',
        args: args as never,
        account: client.account,
      });
    }
  } catch (error) {
    if (isTransportError(error)) throw unknownOutcome('settle', error);
    const diagnosis = await diagnoseTransferFailure(client, request).catch(() => undefined);
    const reason =
      diagnosis && diagnosis.reason !== ExactEvmReason.simulationFailed
        ? diagnosis.reason
        : classifyTransferRevert(error);
    return failure(reason, diagnosis?.message || (error instanceof Error ? error.message : String(error)));
  }
  let hash: Hash;
  try {
    ({ hash } = await sender.send({
      to: request.assetAddress,
      data: encodeFunctionData({
        abi: eip3009Abi,
        functionName: 'transferWithAuthorization',
        args: args as never,
      }),
      gas,
    }));
  } catch (error) {
    // Refused by the node: nothing was broadcast, and the sender left no nonce gap.
    if (isTransportError(error)) throw unknownOutcome('settle', error);
    return failure(classifyTransferRevert(error), error instanceof Error ? error.message : String(error));
  }
  const receipt = await sender.waitForReceipt(hash, timeoutMs);
  if (!receipt) {
    if (paymentKey) state.rememberUnconfirmed(paymentKey, { hash, gas });
    return pendingAnswer(context, hash, timeoutMs);
  }
  return settlementOutcome(context, receipt, hash, gas, gasKey);
}

interface SettleContext {
  client: SettleExactEvmPaymentParameters['client'];
  request: CheckedExactEvmRequest;
  network: string;
}

function paymentKeyOf(request: CheckedExactEvmRequest): string {
  const { from, nonce } = request.payload.authorization;
  return `${request.chainId}:${request.assetAddress}:${from}:${nonce}`.toLowerCase();
}

function failed(
  { request, network }: SettleContext,
  reason: string,
  message: string,
  transaction = '',
): SettleExactEvmPaymentReturnType {
  return {
    success: false,
    errorReason: reason,
    ...(message ? { errorMessage: message.slice(0, 500) } : {}),
    payer: request.payload.authorization.from,
    transaction,
    network,
  };
}

function pendingAnswer(
  context: SettleContext,
  hash: Hash,
  timeoutMs: number,
): SettleExactEvmPaymentReturnType {
  return failed(
    context,
    ExactEvmReason.settlementPending,
    `no receipt for ${hash} within ${timeoutMs} ms; reconcile it, never send it again`,
    hash,
  );
}

/** The answer for the mined settlement transaction `hash`, sent with the gas limit `gas`. */
async function settlementOutcome(
  context: SettleContext,
  receipt: TransactionReceipt,
  hash: Hash,
  gas: bigint,
  gasKey: string | undefined,
): Promise<SettleExactEvmPaymentReturnType> {
  const { client, request, network } = context;
  const { from, to, value } = request.payload.authorization;
  const failure = (reason: string, message: string, transaction: string) =>
    failed(context, reason, message, transaction);
  if (receipt.status !== 'success') {
    // Any revert drops the cached limit (one estimate next time): out of gas does not always show
    // as gas used = limit. Behind a proxy (USDC), the delegatecall gets 63/64 of the gas, runs out,
    // and the proxy reverts with the rest; a revert for any other reason stays well under the limit,
    // which has at least half the estimate again on top.
    if (gasKey) settlementStateOf(client).forgetGasLimit(gasKey);
    if (receipt.gasUsed * 64n >= gas * 63n)
      return failure(ExactEvmReason.transactionFailed, `ran out of gas at the limit of ${gas}`, hash);
    const diagnosis = await diagnoseTransferFailure(client, request).catch(() => undefined);
    return failure(
      diagnosis && diagnosis.reason !== ExactEvmReason.simulationFailed
        ? diagnosis.reason
        : ExactEvmReason.transactionFailed,
      diagnosis?.message ?? '',
      hash,
    );
  }
  const paid = hasTransfer(receipt, request.assetAddress, from, to, BigInt(value));
  if (!paid) {
    return {
      success: false,
      errorReason: ExactEvmReason.transferEventMismatch,
      payer: from,
      transaction: hash,
      network,
    };
  }
  return { success: true, payer: from, transaction: hash, network, amount: value };
}

/** topic0 of `Transfer(address indexed from, address indexed to, uint256 value)`. */
const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

/** An address as a 32-byte indexed topic (lower case, left-padded). */
function addressTopic(address: string): string {
  return `0x000000000000000000000000${address.slice(2).toLowerCase()}`;
}

/**
 * Whether `receipt` has the token's `Transfer(from, to, value)` log, read by its raw topics and
 * data instead of decoding every log with the ABI: the standard event's layout (three topics, the
 * value as one 32-byte word) is matched exactly, so a log of another shape never counts.
 */
export function hasTransfer(
  receipt: { logs: readonly { address: string; topics: readonly string[]; data: string }[] },
  asset: string,
  from: string,
  to: string,
  value: bigint,
): boolean {
  const token = asset.toLowerCase();
  const fromTopic = addressTopic(from);
  const toTopic = addressTopic(to);
  for (const log of receipt.logs) {
    const topics = log.topics;
    if (
      topics.length === 3 &&
      topics[0]!.toLowerCase() === TRANSFER_TOPIC &&
      log.address.toLowerCase() === token &&
      topics[1]!.toLowerCase() === fromTopic &&
      topics[2]!.toLowerCase() === toTopic &&
      log.data.length === 66 &&
      BigInt(log.data) === value
    )
      return true;
  }
  return false;
}
