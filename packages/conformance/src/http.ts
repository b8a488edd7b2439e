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

const STANDARD_BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Sends a request through the context's `fetch` (an origin-form path the URL parser keeps). */
export async function send(
  ctx: AuditContext,
  path: string,
  init: { method?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const response = await ctx.fetch(new URL(path, ctx.baseUrl), {
    method: init.method ?? 'GET',
    ...(init.headers ? { headers: init.headers } : {}),
  });
  const text = await response.text();
  return { status: response.status, header: (name) => response.headers.get(name) ?? undefined, text };
}

/**
 * Sends `target` exactly as written on the request line (`/a/./b`, `/a%5Cb`, absolute-form
 * `http://other/a`), which `fetch` would normalise or refuse.
 */
export function sendRaw(ctx: AuditContext, target: string, method = 'GET'): Promise<Answer> {
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
        res.on('error', reject);
      },
    );
    req.on('error', reject);
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

/** The `error.code` of a seed Error body. */
export function errorCodeOf(answer: Answer): unknown {
  const error = json(answer).error as { code?: unknown } | undefined;
  return typeof error === 'object' && error !== null ? error.code : undefined;
}
