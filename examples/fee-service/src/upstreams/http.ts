import { FeeServiceError } from '../domain/errors';
import type { CircuitBreaker } from './circuit-breaker';
import {
  UpstreamHttpError,
  UpstreamNotFoundError,
  UpstreamRateLimitedError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from './errors';

/** Retry policy for retryable failures (timeouts, 5xx/503, 429, network errors). */
export interface RetryOptions {
  /** Total attempts including the first. Default 3; 1 disables retries. */
  attempts?: number;
  /** First backoff step. Default 200 ms. */
  baseDelayMs?: number;
  /** Cap of one backoff step (and of an honoured Retry-After). Default 2,000 ms. */
  maxDelayMs?: number;
}

export const RETRY_DEFAULTS = { attempts: 3, baseDelayMs: 200, maxDelayMs: 2_000 } as const;

/** Options shared by every upstream client. */
export interface UpstreamHttpOptions {
  /** Per-attempt timeout. Default 5,000 ms. */
  timeoutMs?: number;
  retry?: RetryOptions;
  /** Shared circuit breaker; none by default. */
  breaker?: CircuitBreaker;
  /** fetch implementation. Default the global (undici) fetch. */
  fetch?: typeof fetch;
  /** Random source in [0, 1) for jitter. Default Math.random. */
  random?: () => number;
  /** Sleep used between attempts. Default a timer. */
  sleep?: (ms: number) => Promise<void>;
  /** Extra request headers (e.g. an API key). */
  headers?: Record<string, string>;
}

export const UPSTREAM_HTTP_DEFAULTS = { timeoutMs: 5_000 } as const;

export interface UpstreamRequest {
  method?: 'GET' | 'POST';
  path: string;
  body?: string;
  contentType?: string;
  /** Statuses returned to the caller instead of being classified as errors. Default 2xx only. */
  passStatuses?: readonly number[];
  /** Per-request override of the retry attempts (broadcast uses 1). */
  attempts?: number;
}

export interface UpstreamResponse {
  status: number;
  text: string;
  headers: Headers;
}

/** Parses a `{"error": ...}` JSON body or returns the text itself. */
export function errorDetail(text: string): string {
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === 'object' && 'error' in parsed) {
      const value = (parsed as { error: unknown }).error;
      return typeof value === 'string' ? value : JSON.stringify(value);
    }
  } catch {
    // a text body
  }
  return text.trim();
}

function retryAfterMs(headers: Headers): number | undefined {
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** Failures that say the upstream is unhealthy (they count for the circuit breaker). */
export function isHealthFailure(error: unknown): boolean {
  return (
    error instanceof UpstreamTimeoutError ||
    error instanceof UpstreamUnavailableError ||
    error instanceof UpstreamRateLimitedError
  );
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A small HTTP client for one upstream: per-attempt timeout via AbortSignal, classification of
 * failures into typed errors, exponential backoff with full jitter for retryable failures only,
 * and an optional circuit breaker around every attempt.
 */
export function createUpstreamHttp(options: UpstreamHttpOptions & { upstream: string; baseUrl: string }) {
  const { upstream, baseUrl } = options;
  const timeoutMs = options.timeoutMs ?? UPSTREAM_HTTP_DEFAULTS.timeoutMs;
  const retry = { ...RETRY_DEFAULTS, ...dropUndefined(options.retry ?? {}) };
  const fetchImpl = options.fetch ?? globalThis.fetch;
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? defaultSleep;
  const base = baseUrl.replace(/\/+$/, '');

  async function attempt(request: UpstreamRequest): Promise<UpstreamResponse> {
    const method = request.method ?? 'GET';
    const call = { upstream, operation: `${method} ${request.path}` };
    const url = new URL(base + request.path);
    const headers: Record<string, string> = { ...options.headers };
    if (url.username || url.password) {
      headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
      url.username = '';
      url.password = '';
    }
    if (request.body !== undefined) headers['content-type'] = request.contentType ?? 'text/plain';
    let response: Response;
    let text: string;
    try {
      response = await fetchImpl(url, {
        method,
        headers,
        body: request.body,
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
        throw new UpstreamTimeoutError(call, timeoutMs);
      }
      throw new UpstreamUnavailableError(call, undefined, '', error);
    }
    const { status } = response;
    if ((status >= 200 && status < 300) || request.passStatuses?.includes(status)) {
      return { status, text, headers: response.headers };
    }
    if (status === 429) throw new UpstreamRateLimitedError(call, retryAfterMs(response.headers));
    if (status === 404) throw new UpstreamNotFoundError(call, errorDetail(text));
    if (status >= 500) throw new UpstreamUnavailableError(call, status, errorDetail(text));
    throw new UpstreamHttpError(call, status, errorDetail(text));
  }

  async function request(req: UpstreamRequest): Promise<UpstreamResponse> {
    const attempts = req.attempts ?? retry.attempts;
    for (let i = 1; ; i += 1) {
      try {
        const run = () => attempt(req);
        return await (options.breaker ? options.breaker.run(run, isHealthFailure) : run());
      } catch (error) {
        const retryable = error instanceof FeeServiceError && error.retryable;
        if (!retryable || i >= attempts) throw error;
        const step = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** (i - 1));
        let delay = random() * step; // full jitter
        if (error instanceof UpstreamRateLimitedError && error.retryAfterMs !== undefined) {
          if (error.retryAfterMs > retry.maxDelayMs) throw error;
          delay = Math.max(delay, error.retryAfterMs);
        }
        await sleep(delay);
      }
    }
  }

  return { baseUrl: base, request };
}
export type UpstreamHttp = ReturnType<typeof createUpstreamHttp>;

/** Removes keys whose value is undefined so a defaults merge keeps the defaults. */
export function dropUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * Removes credentials, the query and the fragment from a URL so it can be published (a snapshot's
 * `source`, discovery's facilitator): an API key in `MEMPOOL_URL=https://…/?key=…` or in
 * `user:password@` never reaches an answer.
 */
export function publicUrl(url: string): string {
  const parsed = new URL(url);
  parsed.username = '';
  parsed.password = '';
  parsed.search = '';
  parsed.hash = '';
  return parsed.toString().replace(/\/+$/, '');
}
