import type * as z from 'zod';
import { TollboothError } from '../errors/tollbooth-error';
import { AnyPaymentPayload } from './schemas';
import { readWellFormedPayload } from './well-formed-payload';

/** Default cap on the length of a payment header (characters of header text). */
export const DEFAULT_MAX_PAYMENT_HEADER_BYTES = 16 * 1024;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** One decoder for every header: a non-streaming `decode` keeps no state from one call to the next. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Encodes a header value the x402 way: standard base64 of the UTF-8 bytes of compact JSON.
 *
 * @example
 * encodeHeader({ success: true }) // 'eyJzdWNjZXNzIjp0cnVlfQ=='
 */
export function encodeHeader(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64');
}

/** Encodes an already serialised JSON string. */
export function encodeJsonHeader(json: string): string {
  return Buffer.from(json, 'utf8').toString('base64');
}

/**
 * Decodes a standard-base64 JSON header without any schema check. Rejects the URL-safe
 * alphabet, whitespace anywhere and misplaced padding; accepts missing padding.
 *
 * @throws TollboothError `payment_header_invalid_base64` or `payment_header_invalid_json`.
 */
export function decodeHeaderJson(value: string): unknown {
  if (
    value.length === 0 ||
    !BASE64.test(value) ||
    value.length % 4 === 1 ||
    (value.endsWith('=') && value.length % 4 !== 0)
  ) {
    throw new TollboothError('payment_header_invalid_base64', 'header is not standard base64');
  }
  const bytes = Buffer.from(value, 'base64');
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch (cause) {
    throw new TollboothError('payment_header_invalid_json', 'header is not UTF-8', { cause });
  }
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new TollboothError('payment_header_invalid_json', 'header is not JSON', { cause });
  }
}

export interface DecodePaymentHeaderOptions {
  /** Maximum header length in characters. Default 16 KiB. */
  maxBytes?: number;
}

/**
 * Decodes `PAYMENT-SIGNATURE` / `X-PAYMENT`: size cap, standard base64, UTF-8 JSON, then the
 * v2 PaymentPayload or v1 schema. Each failure is a `TollboothError` with its own code.
 *
 * @throws TollboothError `payment_header_too_large`, `payment_header_invalid_base64`,
 *   `payment_header_invalid_json` or `payment_payload_invalid`.
 */
export function decodePaymentHeader(
  value: string,
  options: DecodePaymentHeaderOptions = {},
): z.infer<typeof AnyPaymentPayload> {
  const max = options.maxBytes ?? DEFAULT_MAX_PAYMENT_HEADER_BYTES;
  if (value.length > max) {
    throw new TollboothError('payment_header_too_large', `payment header longer than ${max} characters`);
  }
  const json = decodeHeaderJson(value);
  // The common case skips zod (see ./well-formed-payload); zod judges the rest and words the error.
  const wellFormed = readWellFormedPayload(json);
  if (wellFormed) return wellFormed;
  const parsed = AnyPaymentPayload.safeParse(json);
  if (!parsed.success) {
    // A failed parse has at least one issue. One at the root (no path) is about the payload as a
    // whole and is named by its message alone: 'payload:' would read as the payload's own field.
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
    throw new TollboothError(
      'payment_payload_invalid',
      `payment payload does not match the x402 schema (${where}${issue.message})`,
    );
  }
  return parsed.data;
}
