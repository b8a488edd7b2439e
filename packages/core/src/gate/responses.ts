import { type ErrorCode, httpStatusOf } from '../errors/codes';
import { buildErrorBody } from '../errors/error-body';
import { mergeHeaderList } from '../http/header-list';
import { EXPOSED_PAYMENT_HEADERS, toStoredResponse } from '../http/paid-response';
import type { GateResponse, HandlerResponse } from '../http/types';
import type { RouteMatch } from '../routes/types';
import type { Outcome } from './types';

/** Codes whose answer tells the client that retrying the exact payload is safe. */
const RETRY_EXACT_PAYLOAD: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'settlement_uncertain',
  'payment_in_progress',
  'paid_response_unavailable',
  'internal_error',
]);

/** The headers of every answer the gate writes itself. */
export function baseHeaders(requestId: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'cache-control': 'no-store',
    'x-request-id': requestId,
    'access-control-expose-headers': EXPOSED_PAYMENT_HEADERS,
  };
}

/** An Error body answer with the status its code maps to (docs/errors.md). */
export function errorResponse(
  code: ErrorCode,
  requestId: string,
  message?: string,
  extraHeaders: Record<string, string> = {},
): GateResponse {
  // An unexpected failure may come after a settlement: retrying the exact payload is always safe
  // (never charged twice) and is how a charged payer gets the paid answer.
  const retryExactPayload = RETRY_EXACT_PAYLOAD.has(code);
  const body = buildErrorBody({ code, requestId, retryExactPayload, ...(message ? { message } : {}) });
  return {
    status: httpStatusOf(code),
    headers: { ...baseHeaders(requestId), ...extraHeaders },
    body: Buffer.from(JSON.stringify(body), 'utf8'),
  };
}

/** The route's 402 challenge, naming why the payment (if any) was refused. */
export function challengeResponse(
  match: RouteMatch,
  requestId: string,
  code: ErrorCode,
  extraHeaders?: Record<string, string>,
): GateResponse {
  const challenge = match.route.challenge(match.resourceUrl, code);
  const headers = baseHeaders(requestId);
  if (challenge.header !== undefined) headers['payment-required'] = challenge.header;
  if (extraHeaders) Object.assign(headers, extraHeaders);
  return { status: 402, headers, body: challenge.body };
}

/**
 * A payment header the gate cannot read as a payment (not base64, not JSON, not a PaymentPayload,
 * too long): 400, the HTTP transport's "Invalid Payment", with the Error body and still the route's
 * challenge in PAYMENT-REQUIRED, so the client can pay. A v1 route has no challenge header: its 400
 * carries the v1 challenge as the body, where a v1 client reads it.
 */
export function malformedPaymentResponse(
  match: RouteMatch,
  requestId: string,
  code: ErrorCode,
  message: string,
): GateResponse {
  const challenge = match.route.challenge(match.resourceUrl, code);
  if (challenge.header === undefined)
    return { status: httpStatusOf(code), headers: baseHeaders(requestId), body: challenge.body };
  return errorResponse(code, requestId, message, { 'payment-required': challenge.header });
}

export function respond(response: GateResponse): Outcome {
  return { kind: 'respond', response };
}

/** A handler's answer as the gate sends and stores it: flat headers, payment headers exposed. */
export function handlerAnswer(response: HandlerResponse): GateResponse {
  const handler = toStoredResponse(response);
  handler.headers['access-control-expose-headers'] = mergeHeaderList(
    handler.headers['access-control-expose-headers'],
    EXPOSED_PAYMENT_HEADERS,
  );
  return handler;
}

/** The code of an answer's body: the Error body's `error.code`, or a 402 body's `error`. */
export function codeOfBody(body: Uint8Array): string | undefined {
  try {
    const parsed = JSON.parse(Buffer.from(body).toString('utf8')) as { error?: unknown };
    const error = parsed?.error;
    if (typeof error === 'string') return error;
    if (error && typeof error === 'object' && typeof (error as { code?: unknown }).code === 'string')
      return (error as { code: string }).code;
  } catch {
    // Not JSON: no code.
  }
  return undefined;
}
