import type { AnyPaymentPayload } from './schemas';

// Hand-written on purpose: this runs on every paid request and costs a fraction of the zod parse.
// The zod schemas in ./schemas stay the only definition of the wire type and the source of every
// error message: this reader accepts only payloads it can prove well formed and returns exactly
// what `AnyPaymentPayload.parse` would (same keys, same order, same values); anything else
// (`undefined`) goes to zod, which accepts it or says what is wrong. A property test in
// ./well-formed-payload.test.ts holds the two to the same answers.

type Json = Record<string, unknown>;

const ATOMIC = /^\d+$/;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Keys zod treats specially (`__proto__` is dropped, an own `constructor` can unmake a plain object). */
function hasSpecialKey(value: Json): boolean {
  return Object.hasOwn(value, '__proto__') || Object.hasOwn(value, 'constructor');
}

function nonEmpty(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

/** `z.record(z.string(), z.unknown())`: a shallow copy of a plain object. */
function record(value: unknown): Json | undefined {
  if (!isObject(value) || hasSpecialKey(value)) return undefined;
  const out: Json = {};
  for (const key of Object.keys(value)) out[key] = value[key];
  return out;
}

const FAIL = Symbol('fail');

/** A `nullish(...)` field: absent stays absent, null reads as undefined, else the inner reading. */
function nullishField(out: Json, input: Json, key: string, read: (value: unknown) => unknown): boolean {
  if (!(key in input)) return true;
  const value = input[key];
  if (value === null || value === undefined) {
    out[key] = undefined;
    return true;
  }
  const parsed = read(value);
  if (parsed === FAIL) return false;
  out[key] = parsed;
  return true;
}

const stringOrFail = (value: unknown) => (typeof value === 'string' ? value : FAIL);
const recordOrFail = (value: unknown) => record(value) ?? FAIL;

/** The keys of a loose object not in its shape, copied after the shape's keys as zod does. */
function copyRest(out: Json, input: Json, shape: ReadonlySet<string>): void {
  for (const key of Object.keys(input)) if (!shape.has(key)) out[key] = input[key];
}

const RESOURCE_KEYS = new Set(['url', 'description', 'mimeType']);
function resourceInfo(value: unknown): unknown {
  if (!isObject(value) || hasSpecialKey(value) || !nonEmpty(value['url'])) return FAIL;
  const out: Json = { url: value['url'] };
  if (!nullishField(out, value, 'description', stringOrFail)) return FAIL;
  if (!nullishField(out, value, 'mimeType', stringOrFail)) return FAIL;
  copyRest(out, value, RESOURCE_KEYS);
  return out;
}

const REQUIREMENT_KEYS = new Set([
  'scheme',
  'network',
  'amount',
  'asset',
  'payTo',
  'maxTimeoutSeconds',
  'extra',
]);
function requirements(value: unknown): Json | undefined {
  if (!isObject(value) || hasSpecialKey(value)) return undefined;
  const { scheme, network, amount, asset, payTo, maxTimeoutSeconds } = value;
  if (
    !nonEmpty(scheme) ||
    !nonEmpty(network) ||
    typeof amount !== 'string' ||
    !ATOMIC.test(amount) ||
    !nonEmpty(asset) ||
    !nonEmpty(payTo) ||
    typeof maxTimeoutSeconds !== 'number' ||
    !Number.isSafeInteger(maxTimeoutSeconds) ||
    maxTimeoutSeconds <= 0
  )
    return undefined;
  const out: Json = { scheme, network, amount, asset, payTo, maxTimeoutSeconds };
  if (!nullishField(out, value, 'extra', recordOrFail)) return undefined;
  copyRest(out, value, REQUIREMENT_KEYS);
  return out;
}

const V2_KEYS = new Set(['x402Version', 'resource', 'accepted', 'payload', 'extensions']);
const V1_KEYS = new Set(['x402Version', 'scheme', 'network', 'payload']);

/**
 * Reads a decoded payment header as `AnyPaymentPayload.parse` would, without zod, when it is well
 * formed; `undefined` means "ask zod" (a bad payload, or one with a shape this reader leaves to it).
 * `decodePaymentHeader` runs it before the schema.
 *
 * @example
 * const json = decodeHeaderJson(header);
 * const payload = readWellFormedPayload(json) ?? AnyPaymentPayload.parse(json);
 */
export function readWellFormedPayload(json: unknown): AnyPaymentPayload | undefined {
  if (!isObject(json) || hasSpecialKey(json)) return undefined;
  const version = json['x402Version'];
  if (version === 2) {
    const out: Json = { x402Version: 2 };
    if (!nullishField(out, json, 'resource', resourceInfo)) return undefined;
    const accepted = requirements(json['accepted']);
    if (!accepted) return undefined;
    out['accepted'] = accepted;
    const payload = record(json['payload']);
    if (!payload) return undefined;
    out['payload'] = payload;
    if (!nullishField(out, json, 'extensions', recordOrFail)) return undefined;
    copyRest(out, json, V2_KEYS);
    return out as AnyPaymentPayload;
  }
  if (version === 1) {
    const { scheme, network } = json;
    if (!nonEmpty(scheme) || !nonEmpty(network)) return undefined;
    const payload = record(json['payload']);
    if (!payload) return undefined;
    const out: Json = { x402Version: 1, scheme, network, payload };
    copyRest(out, json, V1_KEYS);
    return out as AnyPaymentPayload;
  }
  return undefined;
}
