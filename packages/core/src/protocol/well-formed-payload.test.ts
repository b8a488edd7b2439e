import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TollboothError } from '../errors/tollbooth-error';
import { decodeHeaderJson, decodePaymentHeader, encodeHeader } from './codec';
import { AnyPaymentPayload } from './schemas';
import { readWellFormedPayload } from './well-formed-payload';

type Json = Record<string, unknown>;
const DELETE = Symbol('delete');
const SPECIAL = new Set(['__proto__', 'constructor']);

const key = fc.string({ maxLength: 8 }).filter((k) => !SPECIAL.has(k));
const rest = fc.dictionary(key, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 });
const record = fc.dictionary(key, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });
const text = fc.string({ minLength: 1, maxLength: 12 });
const nullish = <T>(arb: fc.Arbitrary<T>) => fc.oneof(arb, fc.constant(null));

/** `base` with `extra` keys mixed in (shape keys win) and every key in an order set by `seed`. */
function shuffle(base: Json, extra: Json, seed: number): Json {
  const all: Json = { ...extra, ...base };
  const weight = (k: string) => [...`${k}${seed}`].reduce((h, c) => (h * 31 + c.charCodeAt(0)) | 0, seed);
  const out: Json = {};
  for (const k of Object.keys(all).sort((a, b) => weight(a) - weight(b))) out[k] = all[k];
  return out;
}
const loose = (shape: fc.Arbitrary<Json>) =>
  fc.tuple(shape, rest, fc.integer()).map(([base, extra, seed]) => shuffle(base, extra, seed));

const requirements = loose(
  fc.record(
    {
      scheme: text,
      network: text,
      amount: fc.bigInt({ min: 0n, max: 10n ** 30n }).map(String),
      asset: text,
      payTo: text,
      maxTimeoutSeconds: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
      extra: nullish(record),
    },
    { requiredKeys: ['scheme', 'network', 'amount', 'asset', 'payTo', 'maxTimeoutSeconds'] },
  ),
);
const resource = loose(
  fc.record(
    { url: text, description: nullish(fc.string()), mimeType: nullish(fc.string()) },
    { requiredKeys: ['url'] },
  ),
);
const v2 = loose(
  fc.record(
    {
      x402Version: fc.constant(2),
      resource: nullish(resource),
      accepted: requirements,
      payload: record,
      extensions: nullish(record),
    },
    { requiredKeys: ['x402Version', 'accepted', 'payload'] },
  ),
);
const v1 = loose(fc.record({ x402Version: fc.constant(1), scheme: text, network: text, payload: record }));
const valid = fc.oneof(v2, v1);

/** Every (object, key) slot of a value, depth first. */
function slots(value: unknown, out: [Json, string][] = []): [Json, string][] {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    for (const k of Object.keys(value)) {
      out.push([value as Json, k]);
      slots((value as Json)[k], out);
    }
  }
  return out;
}
const replacement = fc.oneof(
  fc.constant<typeof DELETE>(DELETE),
  fc.jsonValue({ maxDepth: 1 }),
  fc.constantFrom(0, -1, 1.5, -0, 2 ** 53, '', '12a', ' 1', '1 ', [], {}, null, 1, 2, 3, '2'),
);
const mutated = fc
  .tuple(valid, fc.array(fc.tuple(fc.nat(), replacement), { minLength: 1, maxLength: 3 }))
  .map(([value, edits]) => {
    const copy = structuredClone(value);
    for (const [at, to] of edits) {
      const all = slots(copy);
      if (all.length === 0) break;
      const [parent, k] = all[at % all.length]!;
      if (to === DELETE) delete parent[k];
      else parent[k] = to;
    }
    return copy;
  });

/** The order of keys at every depth: toStrictEqual alone ignores it, a facilitator body does not. */
function keyOrder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(keyOrder);
  if (typeof value !== 'object' || value === null) return value;
  return Object.keys(value).map((k) => [k, keyOrder((value as Json)[k])]);
}

function sameAsZod(json: unknown): void {
  const zod = AnyPaymentPayload.safeParse(json);
  const fast = readWellFormedPayload(json);
  expect(fast !== undefined).toBe(zod.success);
  if (fast !== undefined && zod.success) {
    expect(fast).toStrictEqual(zod.data);
    expect(keyOrder(fast)).toStrictEqual(keyOrder(zod.data));
  }
}

/** decodePaymentHeader as it was with zod alone: the reference for values and error bodies. */
function decodeWithZod(header: string): unknown {
  const parsed = AnyPaymentPayload.safeParse(decodeHeaderJson(header));
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  return `payment payload does not match the x402 schema (${where}${issue.message})`;
}
function decodeNow(header: string): unknown {
  try {
    return decodePaymentHeader(header);
  } catch (error) {
    if (error instanceof TollboothError && error.code === 'payment_payload_invalid') return error.message;
    throw error;
  }
}

describe('readWellFormedPayload', () => {
  it('reads every well-formed payload as zod does: same value, same keys in the same order', () => {
    fc.assert(
      fc.property(valid, (json) => {
        expect(readWellFormedPayload(json)).toBeDefined();
        sameAsZod(json);
      }),
      { numRuns: 500 },
    );
  });

  it('accepts exactly what zod accepts among mutated payloads, with the same value', () => {
    fc.assert(fc.property(mutated, sameAsZod), { numRuns: 2000 });
  });

  it.each([
    [
      'a __proto__ key',
      '{"x402Version":1,"scheme":"exact","network":"base","payload":{},"__proto__":{"a":1}}',
    ],
    ['a constructor key', '{"x402Version":1,"scheme":"exact","network":"base","payload":{"constructor":{}}}'],
  ])('leaves a payload with %s to zod', (_, text) => {
    const json = JSON.parse(text);
    expect(readWellFormedPayload(json)).toBeUndefined();
    // keyOrder, not toStrictEqual: an own `constructor` key confuses the matcher's type check.
    expect(keyOrder(decodeNow(encodeHeader(json)))).toStrictEqual(
      keyOrder(decodeWithZod(encodeHeader(json))),
    );
  });
});

describe('decodePaymentHeader with the hand-written reader', () => {
  it('answers every payload, good or bad, with the value or the error message zod alone gave', () => {
    fc.assert(
      fc.property(fc.oneof(valid, mutated), (json) => {
        const header = encodeHeader(json);
        const now = decodeNow(header);
        const reference = decodeWithZod(header);
        expect(now).toStrictEqual(reference);
        expect(keyOrder(now)).toStrictEqual(keyOrder(reference));
      }),
      { numRuns: 1000 },
    );
  });
});
