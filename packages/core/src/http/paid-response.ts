import { encodeHeader } from '../protocol/codec';
import type { SettleResponse } from '../protocol/schemas';
import { mergeHeaderList } from './header-list';
import type { HandlerResponse, StoredResponse } from './types';

/** Headers a browser client must be able to read. */
export const EXPOSED_PAYMENT_HEADERS = 'PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE';

/** The response header that carries the receipt: `X-PAYMENT-RESPONSE` for a payment sent in `X-PAYMENT`. */
export type ReceiptHeader = 'payment-response' | 'x-payment-response';

/**
 * The paid answer: a handler's stored response with the settlement receipt in its receipt header
 * and the payment headers exposed to browsers.
 */
export function toPaidResponse(
  response: StoredResponse,
  receiptHeader: ReceiptHeader,
  receipt: SettleResponse,
): StoredResponse {
  return {
    status: response.status,
    headers: {
      ...response.headers,
      [receiptHeader]: encodeHeader(receipt),
      'access-control-expose-headers': mergeHeaderList(
        response.headers['access-control-expose-headers'],
        EXPOSED_PAYMENT_HEADERS,
      ),
    },
    body: response.body,
  };
}

/** Flattens a handler's headers into a storable response (`set-cookie` values joined by `\n`). */
export function toStoredResponse(
  response: HandlerResponse,
  extra: Record<string, string> = {},
): StoredResponse {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    const lower = name.toLowerCase();
    headers[lower] = Array.isArray(value) ? value.join(lower === 'set-cookie' ? '\n' : ', ') : String(value);
  }
  Object.assign(headers, extra);
  return { status: response.status, headers, body: response.body };
}
