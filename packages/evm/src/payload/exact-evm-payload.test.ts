import fc from 'fast-check';
import { bytesToHex, getAddress } from 'viem';
import { describe, expect, it } from 'vitest';
import { ExactEvmPayload, parseExactEvmPayload, parseExactEvmPayloadFast } from './exact-evm-payload';

/** The schema alone, as parseExactEvmPayload was before its fast path. */
function reference(payload: unknown) {
  const result = ExactEvmPayload.safeParse(payload);
  if (!result.success) {
    const issue = result.error.issues[0];
    return { ok: false, message: `payload.${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}` };
  }
  return { ok: true, payload: result.data };
}

/** Keys of every nested object, in order: the schema's output order must be kept too. */
function keyOrder(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  return Object.entries(value).map(([k, v]) => [k, keyOrder(v)]);
}

const bytes = (n: number) => fc.uint8Array({ minLength: n, maxLength: n }).map((b) => bytesToHex(b));
const address = fc.oneof(
  { arbitrary: bytes(20), weight: 4 },
  { arbitrary: bytes(20).map((a) => getAddress(a)), weight: 4 },
  {
    arbitrary: fc.constantFrom('0x12', `0x${'g'.repeat(40)}`, `0X${'1'.repeat(40)}`, '', 42, null),
    weight: 1,
  },
);
const MAX = (1n << 256n) - 1n;
const uint = fc.oneof(
  { arbitrary: fc.bigInt({ min: 0n, max: MAX }).map(String), weight: 8 },
  {
    arbitrary: fc.constantFrom(
      String(MAX),
      String(MAX + 1n),
      '9'.repeat(78),
      '0'.repeat(78),
      '9'.repeat(79),
      '-1',
      '0x10',
      ' 7',
      '',
      '1e3',
      7,
      undefined,
    ),
    weight: 2,
  },
);
const nonce = fc.oneof(
  { arbitrary: bytes(32), weight: 6 },
  { arbitrary: fc.constantFrom(`0x${'1'.repeat(63)}`, `0x${'AB'.repeat(32)}`, '0x', 5), weight: 1 },
);
const signature = fc.oneof(
  { arbitrary: bytes(65), weight: 6 },
  { arbitrary: fc.uint8Array({ minLength: 1, maxLength: 200 }).map((b) => bytesToHex(b)), weight: 2 },
  { arbitrary: fc.constantFrom('0x', '0x1', `0x${'zz'.repeat(65)}`, 'ab', null), weight: 1 },
);
const extraKeys = fc.oneof(
  { arbitrary: fc.constant({}), weight: 6 },
  {
    arbitrary: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 }),
    weight: 1,
  },
);

const authorization = fc
  .record(
    { from: address, to: address, value: uint, validAfter: uint, validBefore: uint, nonce },
    { requiredKeys: [] },
  )
  .chain((a) => fc.tuple(fc.constant(a), extraKeys, fc.boolean()))
  .map(([a, extra, shuffled]) => {
    const merged = { ...extra, ...a } as Record<string, unknown>;
    return shuffled ? Object.fromEntries(Object.entries(merged).reverse()) : merged;
  });

const payload = fc.oneof(
  {
    arbitrary: fc
      .record({ signature, authorization }, { requiredKeys: [] })
      .chain((p) => fc.tuple(fc.constant(p), extraKeys))
      .map(([p, extra]) => ({ ...extra, ...p })),
    weight: 12,
  },
  { arbitrary: fc.constantFrom(null, undefined, 'x', 3, [], [{}]), weight: 1 },
);

describe('parseExactEvmPayload', () => {
  it('gives exactly what the schema gives (result, message and key order) for any payload', () => {
    let fast = 0;
    fc.assert(
      fc.property(payload, (p) => {
        if (parseExactEvmPayloadFast(p) !== undefined) fast += 1;
        const actual = parseExactEvmPayload(p);
        const expected = reference(p);
        expect(actual).toStrictEqual(expected);
        expect(keyOrder(actual)).toStrictEqual(keyOrder(expected));
      }),
      { numRuns: 3000 },
    );
    // The generator must reach the fast path often enough for the comparison to mean something.
    expect(fast).toBeGreaterThan(100);
  });

  it.each(['1e3', '-1', '0x10', ' 7', ''])(
    'refuses the uint256 %j with a message instead of throwing',
    (value) => {
      const raw = {
        signature: `0x${'cd'.repeat(65)}`,
        authorization: {
          from: `0x${'11'.repeat(20)}`,
          to: `0x${'22'.repeat(20)}`,
          value,
          validAfter: '0',
          validBefore: '1900000000',
          nonce: `0x${'ab'.repeat(32)}`,
        },
      };
      expect(parseExactEvmPayload(raw)).toStrictEqual({
        ok: false,
        message: 'payload.authorization.value: must be a decimal string',
      });
    },
  );

  it('takes the fast path for a well-formed payload and returns fresh objects', () => {
    const raw = {
      authorization: {
        nonce: `0x${'ab'.repeat(32)}`,
        from: `0x${'11'.repeat(20)}`,
        to: `0x${'22'.repeat(20)}`,
        value: '1000',
        validAfter: '0',
        validBefore: '1900000000',
      },
      signature: `0x${'cd'.repeat(65)}`,
    };
    const fast = parseExactEvmPayloadFast(raw);
    expect(fast).toStrictEqual(ExactEvmPayload.parse(raw));
    expect(fast).not.toBe(raw);
    expect(fast?.authorization).not.toBe(raw.authorization);
  });

  it('leaves payloads with a __proto__ key, a prototype or a getter to the schema', () => {
    const withProto = JSON.parse(
      `{"signature":"0x${'cd'.repeat(65)}","__proto__":{"a":1},"authorization":{}}`,
    );
    expect(parseExactEvmPayloadFast(withProto)).toBeUndefined();
    expect(parseExactEvmPayload(withProto)).toStrictEqual(reference(withProto));
    class Payload {
      signature = `0x${'cd'.repeat(65)}`;
    }
    expect(parseExactEvmPayloadFast(new Payload())).toBeUndefined();
  });
});
