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
  type Hash,
  isAddressEqual,
  parseEventLogs,
  type Transport,
} from 'viem';
import { estimateContractGas, waitForTransactionReceipt, writeContract } from 'viem/actions';
import { ExactEvmReason, eip3009Abi } from '../constants';
import {
  classifyTransferRevert,
  diagnoseTransferFailure,
  isTransportError,
  transferArgs,
  unknownOutcome,
} from '../internal/chain-checks';
import { toExactEvmRequest } from '../internal/exact-evm-request';
import { verifyExactEvmRequest } from './verify-exact-evm-payment';

/** Milliseconds to wait for the settlement receipt before answering `settlement_pending`. */
export const DEFAULT_RECEIPT_TIMEOUT_MS = 30_000;

export interface SettleExactEvmPaymentParameters {
  /** A wallet client on the payment's network whose account pays the gas (give it a nonce manager). */
  client: Client<Transport, Chain | undefined, Account>;
  payload: PaymentPayload | PaymentPayloadV1;
  /** The server's own requirement. */
  requirements: PaymentRequirements | PaymentRequirementsV1;
  /** Default {@link DEFAULT_RECEIPT_TIMEOUT_MS}. */
  receiptTimeoutMs?: number | undefined;
  /** Receipt polling interval. Default: the client's. */
  pollingIntervalMs?: number | undefined;
  /** Simulate before sending (verify already did). Default false, as the official facilitator. */
  simulate?: boolean | undefined;
  /** Unix seconds. Default: the clock. */
  now?: number | undefined;
}
export type SettleExactEvmPaymentReturnType = SettleResponse;

/**
 * Settles an exact EVM payment: re-runs the local and chain checks, sends
 * `transferWithAuthorization` (the `v, r, s` form for 65-byte signatures, the `bytes` form
 * otherwise), waits for the receipt and checks its status and its `Transfer(from, to, value)` log.
 * When the receipt does not arrive in time the answer is `settlement_pending` with the hash of the
 * broadcast transaction: reconcile it later, never send it again.
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
  let verified: Awaited<ReturnType<typeof verifyExactEvmRequest>>;
  try {
    verified = await verifyExactEvmRequest({
      client,
      payload,
      requirements,
      now: parameters.now,
      simulate: parameters.simulate ?? false,
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
  const { from, to, value } = request.payload.authorization;
  const call = {
    address: request.assetAddress,
    abi: eip3009Abi,
    functionName: 'transferWithAuthorization',
    args: transferArgs(request, signature) as never,
    account: client.account,
    chain: client.chain,
  } as const;
  let gas: bigint;
  try {
    // Estimate first, so a revert is diagnosed from the token before any nonce is handed out.
    gas = await estimateContractGas(client, call);
  } catch (error) {
    if (isTransportError(error)) throw unknownOutcome('settle', error);
    const diagnosis = await diagnoseTransferFailure(client, request).catch(() => undefined);
    const reason =
      diagnosis && diagnosis.reason !== ExactEvmReason.simulationFailed
        ? diagnosis.reason
        : classifyTransferRevert(error);
    return {
      success: false,
      errorReason: reason,
      errorMessage: (diagnosis?.message || (error instanceof Error ? error.message : String(error))).slice(
        0,
        500,
      ),
      payer: from,
      transaction: '',
      network,
    };
  }
  let hash: Hash;
  try {
    hash = await writeContract(client, { ...call, gas });
  } catch (error) {
    // viem's sendTransaction resets the nonce manager itself when sending fails (no nonce gap).
    if (isTransportError(error)) throw unknownOutcome('settle', error);
    return {
      success: false,
      errorReason: classifyTransferRevert(error),
      errorMessage: (error instanceof Error ? error.message : String(error)).slice(0, 500),
      payer: from,
      transaction: '',
      network,
    };
  }
  let receipt: Awaited<ReturnType<typeof waitForTransactionReceipt>>;
  try {
    receipt = await waitForTransactionReceipt(client, {
      hash,
      timeout: parameters.receiptTimeoutMs ?? DEFAULT_RECEIPT_TIMEOUT_MS,
      ...(parameters.pollingIntervalMs === undefined
        ? {}
        : { pollingInterval: parameters.pollingIntervalMs }),
    });
  } catch (error) {
    return {
      success: false,
      errorReason: ExactEvmReason.settlementPending,
      errorMessage: (error instanceof Error ? error.message : String(error)).slice(0, 500),
      payer: from,
      transaction: hash,
      network,
    };
  }
  if (receipt.status !== 'success') {
    return {
      success: false,
      errorReason: ExactEvmReason.transactionFailed,
      payer: from,
      transaction: hash,
      network,
    };
  }
  const transfers = parseEventLogs({
    abi: eip3009Abi,
    eventName: 'Transfer',
    logs: receipt.logs.filter((log) => isAddressEqual(log.address, request.assetAddress)),
  });
  const paid = transfers.some(
    (log) =>
      isAddressEqual(log.args.from, from) &&
      isAddressEqual(log.args.to, to) &&
      log.args.value === BigInt(value),
  );
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
