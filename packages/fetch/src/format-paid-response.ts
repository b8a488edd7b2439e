import {
  fromAtomicAmount,
  type PaymentPayload,
  type PaymentPayloadV1,
  type PaymentRequiredV1,
} from '@tollbooth/core';
import { DEFAULT_USD_ASSETS } from '@tollbooth/core/discovery';
import type { PaidResponse } from './paying-fetch';

export interface FormatPaidResponseInput {
  result: PaidResponse;
  /** The final response's body, already read. */
  body: string;
  /** The paying account. */
  payer: string;
  /** Add the whole challenge, the signed authorization and the whole receipt. Default false. */
  verbose?: boolean;
}

export interface Paid {
  amount: string;
  asset: string;
  network: string;
  payTo: string;
}

/** What was paid: the requirement the payload accepted (v2), or the v1 requirement it answers. */
function paidRequirement(result: PaidResponse): Paid | undefined {
  const payload = result.payload;
  if (!payload) return undefined;
  if (payload.x402Version === 2) return (payload as PaymentPayload).accepted;
  const { network, scheme } = payload as PaymentPayloadV1;
  const v1 = (result.paymentRequired as PaymentRequiredV1 | undefined)?.accepts.find(
    (r) => r.network === network && r.scheme === scheme,
  );
  return v1 ? { ...v1, amount: v1.maxAmountRequired } : undefined;
}

/** `0.001 USDC` for a known USD stablecoin, else the atomic units and the asset. */
export function describeAmount({ amount, asset }: Paid): string {
  const decimals = DEFAULT_USD_ASSETS[asset.toLowerCase()];
  return decimals === undefined
    ? `${amount} atomic units of ${asset}`
    : `${fromAtomicAmount(amount, decimals)} USDC`;
}

const line = (label: string, value: string) => `${label.padEnd(12)}${value}`;

/**
 * The summary `tollbooth-pay` prints: status, what was paid to whom, the payer, the settlement
 * transaction and the body; with `verbose`, the challenge, the signed authorization and the
 * receipt as JSON as well.
 */
export function formatPaidResponse(input: FormatPaidResponseInput): string {
  const { result, body, payer, verbose = false } = input;
  const { response, receipt } = result;
  const out: string[] = [];
  if (verbose && result.paymentRequired) {
    out.push('402 challenge:', JSON.stringify(result.paymentRequired, null, 2), '');
  }
  if (verbose && result.payload) {
    const { authorization } = result.payload.payload as { authorization?: unknown };
    out.push(`signed payment: ${JSON.stringify(authorization ?? result.payload.payload)}`, '');
  }
  out.push(`${response.status} ${response.statusText}`.trim());
  const paid = paidRequirement(result);
  if (!paid) out.push(line('payment', 'none asked (no 402)'));
  else {
    out.push(line('amount', `${describeAmount(paid)} on ${paid.network}, to ${paid.payTo}`));
    out.push(line('payer', receipt?.payer ?? payer));
    if (!receipt) out.push(line('transaction', 'none (no PAYMENT-RESPONSE: not settled)'));
    else if (receipt.success) out.push(line('transaction', receipt.transaction));
    else
      out.push(line('transaction', `none: settlement failed (${receipt.errorReason ?? 'no reason given'})`));
    if (result.attempts > 1) {
      out.push(
        line('attempts', `${result.attempts} (the same payload, retried after an uncertain settlement)`),
      );
    }
  }
  out.push('', body);
  if (verbose && receipt) out.push('', 'receipt:', JSON.stringify(receipt, null, 2));
  return out.join('\n');
}
