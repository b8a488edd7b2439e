import type * as z from 'zod';
import { checkHttpUrl } from '../config/check-url';
import { throwConfigProblems } from '../errors/config-error';
import { walk } from '../errors/walk';
import { SettleResponse, SupportedResponse, VerifyResponse } from '../protocol/schemas';
import { FacilitatorError } from './facilitator-error';
import type { FacilitatorCallOptions, FacilitatorClient, FacilitatorOperation } from './types';

export interface HttpFacilitatorClientOptions {
  /** Base URL, e.g. `https://x402.org/facilitator` (`/verify`, `/settle`, `/supported` are appended). */
  url: string;
  /** Timeout of `/verify` and `/supported`, ms. Default 10 000. */
  timeoutMs?: number;
  /** Timeout of `/settle` (waits for the chain), ms. Default 30 000. */
  settleTimeoutMs?: number;
  /** Headers per operation, e.g. a fresh CDP bearer JWT. Called before every request. */
  createAuthHeaders?: (
    operation: FacilitatorOperation,
  ) => Promise<Record<string, string>> | Record<string, string>;
  /** How long a successful `/supported` answer is reused, ms. Default 600 000. */
  supportedTtlMs?: number;
  /** First delay before `/supported` is asked again after a failure, ms; doubles up to 60 s. Default 1 000. */
  supportedRetryMs?: number;
  /** `fetch` implementation. Default `globalThis.fetch`. */
  fetch?: typeof fetch;
}

export const HTTP_FACILITATOR_CLIENT_DEFAULTS = {
  timeoutMs: 10_000,
  settleTimeoutMs: 30_000,
  supportedTtlMs: 600_000,
  supportedRetryMs: 1_000,
  supportedMaxRetryMs: 60_000,
} as const;

export interface HttpFacilitatorClient extends FacilitatorClient {
  readonly url: string;
}

/**
 * A FacilitatorClient for any facilitator speaking the standard HTTP API. Definitive answers
 * are returned (including a 4xx whose JSON body is a valid Verify/SettleResponse); anything
 * uncertain throws a `FacilitatorError`. `/supported` is memoised, never asked at start-up,
 * and asked again after a failure with exponential backoff.
 *
 * @throws TollboothError `invalid_config` for a bad URL or timeout.
 * @example
 * const facilitator = createHttpFacilitatorClient({ url: 'https://x402.org/facilitator' });
 */
export function createHttpFacilitatorClient(options: HttpFacilitatorClientOptions): HttpFacilitatorClient {
  const problems: string[] = [];
  // `/verify`, `/settle` and `/supported` are appended to the URL: no query or fragment.
  const urlProblem = checkHttpUrl('url', options?.url);
  if (urlProblem) problems.push(urlProblem);
  const base = urlProblem ? '' : options.url.replace(/\/+$/, '');
  const settings = { ...HTTP_FACILITATOR_CLIENT_DEFAULTS };
  for (const key of ['timeoutMs', 'settleTimeoutMs', 'supportedTtlMs', 'supportedRetryMs'] as const) {
    const value = options[key];
    if (value === undefined) continue;
    if (!Number.isFinite(value) || value <= 0) problems.push(`${key} must be a positive number`);
    else (settings as Record<string, number>)[key] = value;
  }
  if (options?.createAuthHeaders !== undefined && typeof options.createAuthHeaders !== 'function')
    problems.push('createAuthHeaders must be a function of the operation');
  throwConfigProblems('facilitator client options', problems);
  const doFetch = options.fetch ?? globalThis.fetch;

  async function call<S extends z.ZodType>(
    operation: FacilitatorOperation,
    init: { method: 'GET' | 'POST'; path: string; body?: unknown },
    schema: S,
    timeoutMs: number,
    callOptions: FacilitatorCallOptions = {},
  ): Promise<z.infer<S>> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    if (options.createAuthHeaders) {
      try {
        Object.assign(headers, await options.createAuthHeaders(operation));
      } catch (cause) {
        throw new FacilitatorError('network', operation, 'auth header hook failed', {
          cause,
          unreached: true,
        });
      }
    }
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = callOptions.signal ? AbortSignal.any([timeout, callOptions.signal]) : timeout;
    let response: Response;
    let text: string;
    try {
      response = await doFetch(`${base}${init.path}`, {
        method: init.method,
        headers,
        body: init.body === undefined ? null : JSON.stringify(init.body),
        signal,
      });
      text = await response.text();
    } catch (cause) {
      if (timeout.aborted)
        throw new FacilitatorError('timeout', operation, `no answer within ${timeoutMs} ms`, { cause });
      throw new FacilitatorError(
        'network',
        operation,
        cause instanceof Error ? cause.message : 'request failed',
        { cause, unreached: neverSent(cause) },
      );
    }
    const status = response.status;
    if (status >= 500) {
      throw new FacilitatorError('http-5xx', operation, `HTTP ${status}`, { httpStatus: status });
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (cause) {
      throw new FacilitatorError(
        'invalid-response',
        operation,
        `HTTP ${status} with a body that is not JSON`,
        {
          cause,
          httpStatus: status,
        },
      );
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      throw new FacilitatorError('invalid-response', operation, `HTTP ${status} with an unexpected body`, {
        cause: parsed.error,
        httpStatus: status,
      });
    }
    // 2xx, or a 4xx whose body is a definitive Verify/SettleResponse (some facilitators answer 400).
    return parsed.data;
  }

  let supportedCache: { value: SupportedResponse; at: number } | undefined;
  let supportedInFlight: Promise<SupportedResponse> | undefined;
  let supportedFailure: { error: unknown; retryAt: number; delay: number } | undefined;

  const body = (payload: { x402Version: 1 | 2 }, requirements: unknown) => ({
    x402Version: payload.x402Version,
    paymentPayload: payload,
    paymentRequirements: requirements,
  });

  return {
    url: base,
    verify: (payload, requirements, callOptions) =>
      call(
        'verify',
        { method: 'POST', path: '/verify', body: body(payload, requirements) },
        VerifyResponse,
        settings.timeoutMs,
        callOptions,
      ),
    settle: (payload, requirements, callOptions) =>
      call(
        'settle',
        { method: 'POST', path: '/settle', body: body(payload, requirements) },
        SettleResponse,
        settings.settleTimeoutMs,
        callOptions,
      ),
    supported(callOptions) {
      const now = Date.now();
      if (supportedCache && now - supportedCache.at < settings.supportedTtlMs) {
        return Promise.resolve(supportedCache.value);
      }
      if (supportedInFlight) return supportedInFlight;
      if (supportedFailure && now < supportedFailure.retryAt) return Promise.reject(supportedFailure.error);
      const attempt = call(
        'supported',
        { method: 'GET', path: '/supported' },
        SupportedResponse,
        settings.timeoutMs,
        callOptions,
      );
      supportedInFlight = attempt.then(
        (value) => {
          supportedCache = { value, at: Date.now() };
          supportedFailure = undefined;
          supportedInFlight = undefined;
          return value;
        },
        (error: unknown) => {
          const delay = supportedFailure
            ? Math.min(supportedFailure.delay * 2, HTTP_FACILITATOR_CLIENT_DEFAULTS.supportedMaxRetryMs)
            : settings.supportedRetryMs;
          supportedFailure = { error, retryAt: Date.now() + delay, delay };
          supportedInFlight = undefined;
          throw error;
        },
      );
      return supportedInFlight;
    },
  };
}

/** Connection errors raised before a byte of the request left: refused, or no address for the host. */
const UNSENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Whether a failed `fetch` provably never sent its request: undici's `fetch failed` carries the
 * connection's error as its cause (`ECONNREFUSED`, `ENOTFOUND`, `EAI_AGAIN`), or refused to make
 * the request at all (`bad port`, a port fetch never connects to). A timeout or a reset may come
 * after the facilitator read the request: never unsent.
 */
function neverSent(cause: unknown): boolean {
  return (
    walk(cause, (error) => {
      const code = (error as { code?: unknown }).code;
      return (typeof code === 'string' && UNSENT_CODES.has(code)) || error.message === 'bad port';
    }) !== undefined
  );
}
