import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { PaymentRequired } from '@tollbooth/core';
import { AuditFailure, check } from './audit-failure';
import type { AuditContext } from './types';

/** A response as the audits see it. */
export interface Answer {
  status: number;
  /** Lower-case names. */
  header(name: string): string | undefined;
  text: string;
}

/** The target kept answering 429 beyond the wait the run allows: the rule was not judged. */
export class RateLimited extends Error {
  override readonly name = 'RateLimited';
}

/** The target could not be reached (refused, reset, unknown host, no answer). */
export class TargetUnreachable extends Error {
  override readonly name = 'TargetUnreachable';
}

const STANDARD_BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const FIRST_WAIT_MS = 1_000;

/** How long a 429 asks to wait: its Retry-After (seconds or an HTTP date), else `fallbackMs`. */
export function retryAfterMs(answer: Answer, fallbackMs: number): number {
  const value = answer.header('retry-after')?.trim();
  if (value && /^\d+$/.test(value)) return Number(value) * 1000;
  const date = value ? Date.parse(value) : Number.NaN;
  return Number.isNaN(date) ? fallbackMs : Math.max(0, date - Date.now());
}

/**
 * Sends a request, waiting out 429 answers within the audit's allowance (`ctx.rateLimit`), so a
 * rate limiter in front of the target is never mistaken for a broken rule.
 */
async function withRateLimit(ctx: AuditContext, what: string, send: () => Promise<Answer>): Promise<Answer> {
  let fallback = FIRST_WAIT_MS;
  for (;;) {
    const answer = await send();
    if (answer.status !== 429) return answer;
    const limit = ctx.rateLimit;
    const wait = retryAfterMs(answer, fallback);
    if (!limit || limit.waitedMs + wait > limit.maxWaitMs) {
      const left = Math.max(0, Math.floor(((limit?.maxWaitMs ?? 0) - (limit?.waitedMs ?? 0)) / 1000));
      throw new RateLimited(
        `${what} answered 429 (rate limited) asking to wait ${Math.ceil(wait / 1000)} s, beyond the ${left} s of waiting left to this audit`,
      );
    }
    limit.waitedMs += wait;
    limit.onWait?.(wait, what);
    fallback *= 2;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

/** Why a request could not be sent, in one line. */
function unreachable(url: string, error: unknown): TargetUnreachable {
  const cause = (error as { cause?: unknown })?.cause;
  const inner = cause instanceof Error ? cause : error;
  const text = inner instanceof Error ? ((inner as { code?: string }).code ?? inner.message) : String(inner);
  return new TargetUnreachable(`cannot reach ${url}: ${text}`);
}

/** Sends a request through the context's `fetch` (an origin-form path the URL parser keeps). */
export async function send(
  ctx: AuditContext,
  path: string,
  init: { method?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const url = new URL(path, ctx.baseUrl);
  const method = init.method ?? 'GET';
  return withRateLimit(ctx, `${method} ${path}`, async () => {
    let response: Response;
    let text: string;
    try {
      response = await ctx.fetch(url, { method, ...(init.headers ? { headers: init.headers } : {}) });
      text = await response.text();
    } catch (error) {
      throw unreachable(url.origin, error);
    }
    return { status: response.status, header: (name) => response.headers.get(name) ?? undefined, text };
  });
}

/**
 * Sends `target` exactly as written on the request line (`/a/./b`, `/a%5Cb`, absolute-form
 * `http://other/a`), which `fetch` would normalise or refuse.
 */
export function sendRaw(ctx: AuditContext, target: string, method = 'GET'): Promise<Answer> {
  return withRateLimit(ctx, `${method} ${target}`, () => sendRawOnce(ctx, target, method));
}

function sendRawOnce(ctx: AuditContext, target: string, method: string): Promise<Answer> {
  const url = new URL(ctx.baseUrl);
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      { hostname: url.hostname, port: url.port, path: target, method, headers: { host: url.host } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const header = (name: string) => {
            const value = res.headers[name.toLowerCase()];
            return Array.isArray(value) ? value.join(', ') : value;
          };
          resolve({ status: res.statusCode ?? 0, header, text: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', (error) => reject(unreachable(url.origin, error)));
      },
    );
    req.on('error', (error) => reject(unreachable(url.origin, error)));
    req.end();
  });
}

/** Parses a JSON body, failing the audit when it is not JSON. */
export function json(answer: Answer, what = 'body'): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(answer.text);
  } catch {
    throw new AuditFailure(`${what} is not JSON: ${answer.text.slice(0, 200)}`);
  }
  check(
    typeof value === 'object' && value !== null,
    `${what} is not a JSON object: ${answer.text.slice(0, 200)}`,
  );
  return value as Record<string, unknown>;
}

/** Decodes a base64 JSON header (standard alphabet), failing the audit when it does not decode. */
export function decodeHeader(answer: Answer, name: string): Record<string, unknown> {
  const value = answer.header(name);
  check(value !== undefined, `no ${name.toUpperCase()} header (status ${answer.status})`);
  check(STANDARD_BASE64.test(value), `${name.toUpperCase()} is not standard base64: ${value.slice(0, 80)}`);
  const text = Buffer.from(value, 'base64').toString('utf8');
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new AuditFailure(`${name.toUpperCase()} does not decode to JSON: ${text.slice(0, 200)}`);
  }
}

/** Fetches the 402 challenge of a paid path. */
export async function challengeOf(ctx: AuditContext, path: string): Promise<PaymentRequired> {
  const answer = await send(ctx, path);
  check(answer.status === 402, `unpaid GET ${path} answered ${answer.status}, expected 402`);
  return decodeHeader(answer, 'payment-required') as unknown as PaymentRequired;
}

/** The `error.code` of an Error body (`docs/errors.md`). */
export function errorCodeOf(answer: Answer): unknown {
  const error = json(answer).error as { code?: unknown } | undefined;
  return typeof error === 'object' && error !== null ? error.code : undefined;
}
