import { encodeHeader, type RequestView, TOOL_METHOD, TollboothError } from '@tollbooth/core';
import { PAYMENT_META_KEY, V1_PAYMENT_META_KEY } from './meta-keys';

/** The payment a `tools/call` carries in its `_meta`, read as the gate reads a payment header. */
export type MetaPayment =
  /** No payment: the gate answers the challenge. */
  | { kind: 'none' }
  /** A payment, as the header text the gate decodes (`x-payment` for a v1 client's). */
  | { kind: 'header'; name: 'payment-signature' | 'x-payment'; value: string }
  /** A payment refused before the gate sees it, with the reason code of its challenge. */
  | {
      kind: 'refused';
      code: 'payment_payload_invalid' | 'payment_version_mismatch' | 'payment_resource_mismatch';
      message: string;
    };

/**
 * Reads the payment of a tool call: `_meta["x402/payment"]`, a `PaymentPayload` object (encoded
 * as the gate's `PAYMENT-SIGNATURE` text), or a v1 client's `_meta["x402.payment"]`, the base64
 * `X-PAYMENT` text itself. Anything else under those keys is refused with a reason, never passed
 * on; a v2 payment naming another resource URL (another tool's payment) is refused too.
 */
export function readMetaPayment(meta: Readonly<Record<string, unknown>>, resourceUrl: string): MetaPayment {
  const payment = meta[PAYMENT_META_KEY];
  if (payment !== undefined) {
    if (payment === null || typeof payment !== 'object' || Array.isArray(payment))
      return refused(
        'payment_payload_invalid',
        `_meta["${PAYMENT_META_KEY}"] must be a PaymentPayload object`,
      );
    // The v2 key carries v2 payments; a v1 client's payment travels under its own key.
    if ((payment as { x402Version?: unknown }).x402Version === 1)
      return refused('payment_version_mismatch', `a v1 payment goes in _meta["${V1_PAYMENT_META_KEY}"]`);
    const resource = (payment as { resource?: unknown }).resource;
    const url = resource && typeof resource === 'object' ? (resource as { url?: unknown }).url : undefined;
    if (typeof url === 'string' && url !== resourceUrl)
      return refused(
        'payment_resource_mismatch',
        `the payment was made for ${url.slice(0, 200)}, this tool is ${resourceUrl}`,
      );
    return { kind: 'header', name: 'payment-signature', value: encodeHeader(payment) };
  }
  const legacy = meta[V1_PAYMENT_META_KEY];
  if (legacy === undefined) return { kind: 'none' };
  if (typeof legacy !== 'string')
    return refused(
      'payment_payload_invalid',
      `_meta["${V1_PAYMENT_META_KEY}"] must be the base64 text of a v1 payment`,
    );
  return { kind: 'header', name: 'x-payment', value: legacy };
}

function refused(code: Extract<MetaPayment, { kind: 'refused' }>['code'], message: string): MetaPayment {
  return { kind: 'refused', code, message };
}

/** What the gate's request view of a tool call is built from. */
export interface ToolCall {
  name: string;
  /** The validated arguments: a payment identifier is bound to them (they are the call's "body"). */
  arguments: Record<string, unknown>;
  payment: Extract<MetaPayment, { kind: 'header' } | { kind: 'none' }>;
  /** Passed on as the view's `raw`, for the gate's hooks and the route's precondition. */
  raw: unknown;
}

/**
 * The gate's request view of a tool call: method `TOOL`, the tool's name as the path (its route
 * is `TOOL /<name>`), the payment as the header it would travel in over HTTP, the arguments'
 * JSON as the body. No header else: the request id is the gate's own.
 */
export function toToolRequestView(call: ToolCall): RequestView {
  const payment = call.payment;
  let body: Uint8Array | undefined;
  return {
    method: TOOL_METHOD,
    url: `/${call.name}`,
    header: (name) =>
      payment.kind === 'header' && name.toLowerCase() === payment.name ? payment.value : undefined,
    raw: call.raw,
    body: async (maxBytes) => {
      body ??= Buffer.from(JSON.stringify(call.arguments), 'utf8');
      if (body.byteLength > maxBytes)
        throw new TollboothError('request_body_too_large', `the arguments are longer than ${maxBytes} bytes`);
      return body;
    },
  };
}
