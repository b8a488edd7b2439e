import {
  PAYMENT_IDENTIFIER,
  PaymentIdentifier,
  type PaymentPayload,
  type PaymentRequired,
} from '@tollbooth/core';

/**
 * A new identifier for the `payment-identifier` extension: `prefix` and 32 hex digits, as the
 * official `generatePaymentId()` makes them (docs/payment-identifier.md#on-the-wire).
 *
 * @param prefix - default `pay_`; letters, digits, `-` and `_` only.
 * @example
 * const id = generatePaymentIdentifier('order_'); // "order_3f2b…"
 */
export function generatePaymentIdentifier(prefix = 'pay_'): string {
  return `${prefix}${globalThis.crypto.randomUUID().replaceAll('-', '')}`;
}

/** Whether `id` is an identifier the extension allows (16–128 of A–Z, a–z, 0–9, `-`, `_`). */
export function isPaymentIdentifier(id: unknown): id is string {
  return PaymentIdentifier.safeParse(id).success;
}

/** The extension as the challenge advertises it (an object with an `info` object), else undefined. */
export function advertisedPaymentIdentifier(
  paymentRequired: PaymentRequired,
): { info: Record<string, unknown> } | undefined {
  const extension = paymentRequired.extensions?.[PAYMENT_IDENTIFIER] as { info?: unknown } | undefined;
  if (extension === null || typeof extension !== 'object') return undefined;
  const { info } = extension;
  if (info === null || typeof info !== 'object' || Array.isArray(info)) return undefined;
  return extension as { info: Record<string, unknown> };
}

/**
 * The payload with `id` in its `extensions`: the challenge's declaration echoed with `info.id`
 * added, as the extension's clients send it. The signature does not cover extensions, so the
 * payload stays valid.
 */
export function attachPaymentIdentifier(
  payload: PaymentPayload,
  declared: { info: Record<string, unknown> },
  id: string,
): PaymentPayload {
  return {
    ...payload,
    extensions: {
      ...payload.extensions,
      [PAYMENT_IDENTIFIER]: { ...declared, info: { ...declared.info, id } },
    },
  };
}
