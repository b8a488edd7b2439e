import { encodeHeader, type PaymentRequired } from '@tollbooth/core';
import { check, checkEqual } from '../audit-failure';
import { type Answer, challengeOf, decodeHeader, json, send } from '../http';
import type { Audit, AuditContext, AuditControl, AuditPaths } from '../types';

/** Declares an audit (identity; keeps the list typed). */
export const defineAudit = (audit: Audit): Audit => audit;

/** The control of a suite-built target (audits that need it are only run with one). */
export function controlOf(ctx: AuditContext): AuditControl {
  check(ctx.control, 'this audit needs a target built from the audit fixture');
  return ctx.control;
}

/** A path the audit declared in `uses`. */
export function pathOf(ctx: AuditContext, name: keyof AuditPaths): string {
  const path = ctx.paths[name];
  check(path, `the target has no ${name} path`);
  return path;
}

/** Sends a payment header to a path. */
export function sendPayment(ctx: AuditContext, path: string, value: string, header = 'PAYMENT-SIGNATURE') {
  return send(ctx, path, { headers: { [header]: value } });
}

/** Fails unless the answer is a 402 challenge (header and body alike) with `error: code`. */
export function checkRejected(answer: Answer, code: string): PaymentRequired {
  check(answer.status === 402, `expected 402 ${code}, got ${answer.status}: ${answer.text.slice(0, 200)}`);
  const challenge = decodeHeader(answer, 'payment-required');
  const body = json(answer);
  checkEqual(body['error'], code, 'error of the 402 body');
  checkEqual(challenge['error'], code, 'error of the PAYMENT-REQUIRED challenge');
  return challenge as unknown as PaymentRequired;
}

/**
 * Fails unless the answer refuses a malformed payment the way the x402 HTTP transport says (400,
 * "Invalid Payment") and Tollbooth answers it: the Error body with `code`, and still the route's
 * challenge in PAYMENT-REQUIRED (its `error` the same code), so the client can pay.
 */
export function checkMalformed(answer: Answer, code: string): PaymentRequired {
  checkErrorBody(answer, 400, code);
  const challenge = decodeHeader(answer, 'payment-required');
  check(
    challenge['x402Version'] === 2 && Array.isArray(challenge['accepts']) && challenge['accepts'].length > 0,
    `the PAYMENT-REQUIRED of the 400 is not a challenge: ${JSON.stringify(challenge).slice(0, 160)}`,
  );
  checkEqual(challenge['error'], code, 'error of the PAYMENT-REQUIRED challenge');
  return challenge as unknown as PaymentRequired;
}

/** Fails unless the answer carries the Error body (`docs/errors.md`) with `code` and a coherent shape. */
export function checkErrorBody(answer: Answer, status: number, code: string): Record<string, unknown> {
  checkEqual(answer.status, status, `status of the ${code} answer`);
  const error = json(answer)['error'] as Record<string, unknown> | undefined;
  check(typeof error === 'object' && error !== null, `no Error body: ${answer.text.slice(0, 200)}`);
  checkEqual(error['code'], code, 'error.code');
  check(typeof error['message'] === 'string' && error['message'] !== '', 'error.message is missing');
  check(typeof error['request_id'] === 'string' && error['request_id'] !== '', 'error.request_id is missing');
  check(typeof error['retryable'] === 'boolean', 'error.retryable is not a boolean');
  return error;
}

/** Fails when the handler of `route` ran (only checked on suite-built targets). */
export function checkNotRun(ctx: AuditContext, route: keyof AuditPaths = 'paid'): void {
  if (ctx.control) checkEqual(ctx.control.runs(route), 0, `runs of the ${route} handler`);
}

/** Base64 of compact JSON, as a client would send it. */
export const encodeJson = (value: unknown): string => encodeHeader(value);

/** Decodes a header value built by the suite, changes it and encodes it again. */
export function mutatePayment(value: string, change: (payment: Record<string, unknown>) => void): string {
  const payment = JSON.parse(Buffer.from(value, 'base64').toString('utf8')) as Record<string, unknown>;
  change(payment);
  return encodeHeader(payment);
}

/** A valid payment header for `path` (default: the paid path), built from its live challenge. */
export async function paymentFor(ctx: AuditContext, path = ctx.paths.paid): Promise<string> {
  return controlOf(ctx).pay(await challengeOf(ctx, path));
}

/** Sends a fresh valid payment to `path` (default: the paid path). */
export async function payOnce(ctx: AuditContext, path = ctx.paths.paid): Promise<Answer> {
  return sendPayment(ctx, path, await paymentFor(ctx, path));
}

/** Fails unless the paid handler ran once and the facilitator settled `settles` times. */
export function checkRanOnce(control: AuditControl, settles = 1): void {
  checkEqual(control.runs('paid'), 1, 'handler runs');
  checkEqual(control.facilitator.calls.settle, settles, 'settle calls');
}
