// Gate step 1 of 8: admit — the paid route of a request, the refusals before its payment, the route's precondition (first; before read-payment, or sign-in-step for a sign-in proof).
import { randomUUID } from 'node:crypto';
import type { GateResponse, RequestView } from '../http/types';
import type { CompiledRoute, RouteMatch, RouteTable } from '../routes/types';
import { errorResponse } from './responses';
import type { GateRuntime } from './runtime';
import type { Outcome } from './types';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A request at a paid route, and the id its answers and logs carry. */
export interface Admitted {
  kind: 'matched';
  match: RouteMatch;
  requestId: string;
  /** The request itself: the lifecycle hooks' events carry it. */
  request: RequestView;
}

/**
 * Finds the paid route of a request: `pass` for a preflight or a request no paid route serves,
 * 405 with `Allow` for a paid path's other methods (unless `otherMethods` is `pass`).
 */
export function matchRequest(
  table: RouteTable,
  otherMethods: 'method-not-allowed' | 'pass',
  request: RequestView,
): Admitted | Outcome {
  const method = request.method.toUpperCase();
  if (method === 'OPTIONS') return { kind: 'pass' };
  const match = table.match(method, request.url);
  if (match) return { kind: 'matched', match, requestId: requestIdOf(request), request };
  const allow = otherMethods === 'pass' ? [] : table.methodsFor(request.url);
  if (allow.length === 0) return { kind: 'pass' };
  const response = errorResponse('method_not_allowed', requestIdOf(request), `${method} is not served here`, {
    allow: allow.join(', '),
  });
  return { kind: 'respond', response };
}

/** The client's `X-Request-Id` when it is well formed, else a new one. */
export function requestIdOf(request: RequestView): string {
  const incomingId = request.header('x-request-id');
  return incomingId !== undefined && REQUEST_ID.test(incomingId) ? incomingId : randomUUID();
}

/**
 * Why a matched request is refused before its payment is looked at, if it is: a fragment in the
 * target, a paused or retired route, a URL other than the canonical one.
 */
export function admissionRefusal(
  request: RequestView,
  match: RouteMatch,
  requestId: string,
): GateResponse | undefined {
  const route = match.route;
  // A fragment is never part of a request target (RFC 9112): refused before any challenge.
  if (request.url.includes('#'))
    return errorResponse('invalid_request_target', requestId, 'a request target cannot carry a #fragment');
  if (route.availability === 'paused') {
    return errorResponse('resource_paused', requestId, undefined, {
      'retry-after': String(route.retryAfterSeconds),
    });
  }
  if (route.availability === 'retired') return errorResponse('resource_retired', requestId);
  if (route.canonical && !isCanonical(match, route)) {
    return errorResponse(
      'non_canonical_request',
      requestId,
      `only the canonical URL ${route.canonical.baseUrl}${route.path} is accepted${route.canonical.allowQuery ? '' : ', without a query string'}`,
    );
  }
  return undefined;
}

function isCanonical(match: RouteMatch, route: CompiledRoute): boolean {
  const rule = route.canonical!;
  const base = new URL(rule.baseUrl);
  // The path as the application sees it, the one the route matched: a path in baseUrl belongs to
  // the public URL (the proxy in front strips it), so no request target the route matched has it.
  if (match.target.rawPath !== route.path) return false;
  if (match.target.query !== undefined && !rule.allowQuery) return false;
  // Scheme and host as the adapter saw them (behind a proxy: the framework's trust-proxy view).
  if (rule.checkOrigin !== false && match.target.origin !== undefined) {
    if (originOf(match.target.origin) !== base.origin) return false;
  }
  return true;
}

/** `scheme://host[:port]` in URL's canonical form (default ports dropped), or '' when unparsable. */
function originOf(origin: string): string {
  try {
    return new URL(origin).origin;
  } catch {
    return '';
  }
}

/** The payment header of a request and its name, if it carries one (`PAYMENT-SIGNATURE` first). */
export function paymentHeaderOf(
  request: RequestView,
): { value: string; name: 'payment-signature' | 'x-payment' } | undefined {
  const signature = request.header('payment-signature');
  if (signature !== undefined) return { value: signature, name: 'payment-signature' };
  const legacy = request.header('x-payment');
  return legacy === undefined ? undefined : { value: legacy, name: 'x-payment' };
}

/**
 * The route's precondition, if it has one: its own answer (`quiet`: not a failure the hooks
 * report), or 503 when it threw.
 */
export async function runPrecondition(
  rt: Pick<GateRuntime, 'logger'>,
  request: RequestView,
  match: RouteMatch,
  requestId: string,
): Promise<{ response: GateResponse; quiet: boolean } | undefined> {
  const precondition = match.route.config.precondition;
  if (!precondition) return undefined;
  try {
    const early = await precondition(request, match);
    return early ? { response: early, quiet: true } : undefined;
  } catch (error) {
    rt.logger?.error({ err: error, requestId }, 'route precondition failed');
    return {
      response: errorResponse('internal_error', requestId, 'the request could not be checked'),
      quiet: false,
    };
  }
}
