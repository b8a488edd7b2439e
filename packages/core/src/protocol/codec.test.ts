import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TollboothError } from '../errors/tollbooth-error';
import { decodeHeaderJson, decodePaymentHeader, encodeHeader } from './codec';

const payload = {
  x402Version: 2,
  resource: { url: 'https://api.example/x' },
  accepted: {
    scheme: 'exact',
    network: 'eip155:8453',
    amount: '1000',
    asset: '0xA',
    payTo: '0xB',
    maxTimeoutSeconds: 60,
    extra: { name: 'USD Coin', version: '2' },
  },
  payload: { signature: '0x01' },
};

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof TollboothError) return error.code;
    throw error;
  }
  return undefined;
}

describe('encodeHeader', () => {
  it('produces standard base64 of compact UTF-8 JSON', () => {
    const header = encodeHeader({ a: 'é', b: [1] });
    expect(Buffer.from(header, 'base64').toString('utf8')).toBe('{"a":"é","b":[1]}');
    expect(header).toMatch(/^[A-Za-z0-9+/]+=*$/);
  });

  it('round-trips any JSON value through decodeHeaderJson', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(decodeHeaderJson(encodeHeader(value))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });
});

describe('decodePaymentHeader', () => {
  it('decodes a v2 payload', () => {
    expect(decodePaymentHeader(encodeHeader(payload)).x402Version).toBe(2);
  });

  it('decodes a v1 payload', () => {
    const v1 = { x402Version: 1, scheme: 'exact', network: 'base', payload: { signature: '0x' } };
    expect(decodePaymentHeader(encodeHeader(v1))).toMatchObject({ network: 'base' });
  });

  it('accepts a header without padding', () => {
    const header = encodeHeader({ ...payload, pad: 'x' }).replace(/=+$/, '');
    expect(decodePaymentHeader(header).x402Version).toBe(2);
  });

  /** The payload grown by a `pad` field until its header ends with exactly `n` padding characters. */
  const paddedWith = (n: number) => {
    for (let pad = ''; ; pad += 'x') {
      const header = encodeHeader({ ...payload, pad });
      if (header.length - header.replace(/=+$/, '').length === n) return header;
    }
  };

  it.each([
    [1, 3],
    [2, 2],
  ])(
    'accepts a header with its %i padding character(s) left off, %i characters past a multiple of four',
    (n, rest) => {
      const header = paddedWith(n);
      const bare = header.slice(0, -n);
      expect(bare.length % 4).toBe(rest);
      expect(decodePaymentHeader(bare)).toStrictEqual(decodePaymentHeader(header));
    },
  );

  it('rejects padding that leaves the length off a multiple of four, which Buffer would decode', () => {
    let header = encodeHeader(payload);
    for (let pad = 'x'; !header.endsWith('=='); pad += 'x') header = encodeHeader({ ...payload, pad });
    const short = header.slice(0, -1);
    expect(Buffer.from(short, 'base64').toString('utf8')).toContain('"x402Version":2');
    expect(codeOf(() => decodePaymentHeader(short))).toBe('payment_header_invalid_base64');
    expect(decodePaymentHeader(header).x402Version).toBe(2);
  });

  it.each([
    ['URL-safe characters', (h: string) => h.replaceAll('+', '-').replaceAll('/', '_') + '-_'],
    ['leading whitespace', (h: string) => ` ${h}`],
    ['trailing newline', (h: string) => `${h}\n`],
    ['inner whitespace', (h: string) => `${h.slice(0, 8)} ${h.slice(8)}`],
    ['misplaced padding', (h: string) => `${h.slice(0, 5)}=${h.slice(5)}`],
    ['an empty value', () => ''],
  ])('rejects %s as invalid base64', (_name, mutate) => {
    expect(codeOf(() => decodePaymentHeader(mutate(encodeHeader(payload))))).toBe(
      'payment_header_invalid_base64',
    );
  });

  it('rejects a header over the size cap', () => {
    expect(codeOf(() => decodePaymentHeader('A'.repeat(101), { maxBytes: 100 }))).toBe(
      'payment_header_too_large',
    );
  });

  /** The payload, grown by an extension until its header is exactly `length` characters (a multiple of 4). */
  const headerOfLength = (length: number) => {
    const bare = Buffer.byteLength(JSON.stringify({ ...payload, extensions: { pad: '' } }));
    return encodeHeader({ ...payload, extensions: { pad: 'x'.repeat((length / 4) * 3 - bare) } });
  };

  it.each([
    ['the default cap of 16 KiB', undefined, 16 * 1024],
    ['a cap of 400', 400, 400],
  ])('reads a header exactly as long as %s and refuses one character more', (_what, maxBytes, length) => {
    const exact = headerOfLength(length);
    expect(exact).toHaveLength(length);
    const options = maxBytes === undefined ? {} : { maxBytes };
    expect(decodePaymentHeader(exact, options)).toMatchObject({ x402Version: 2, accepted: payload.accepted });
    expect(codeOf(() => decodePaymentHeader(`${exact}A`, options))).toBe('payment_header_too_large');
  });

  it('rejects base64 that is not JSON', () => {
    expect(codeOf(() => decodePaymentHeader(Buffer.from('not json').toString('base64')))).toBe(
      'payment_header_invalid_json',
    );
  });

  it('rejects bytes that are not UTF-8', () => {
    expect(codeOf(() => decodePaymentHeader(Buffer.from([0xff, 0xfe, 0x7b]).toString('base64')))).toBe(
      'payment_header_invalid_json',
    );
  });

  it('rejects JSON that is not a payment payload', () => {
    expect(codeOf(() => decodePaymentHeader(encodeHeader({ x402Version: 2, payload: {} })))).toBe(
      'payment_payload_invalid',
    );
    expect(codeOf(() => decodePaymentHeader(encodeHeader({ ...payload, x402Version: 3 })))).toBe(
      'payment_payload_invalid',
    );
  });

  it('never throws anything but a TollboothError for arbitrary input', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (value) => {
        expect(codeOf(() => decodePaymentHeader(value))).toMatch(/^payment_/);
      }),
    );
  });
});

describe('decodePaymentHeader refusals, as a client reads them in the 400', () => {
  const refusal = (fn: () => unknown) => {
    try {
      fn();
    } catch (error) {
      if (error instanceof TollboothError)
        return { code: error.code, message: error.message, cause: error.cause };
      throw error;
    }
    throw new Error('no refusal');
  };

  it('names the cap a header is over', () => {
    expect(refusal(() => decodePaymentHeader('A'.repeat(101), { maxBytes: 100 }))).toStrictEqual({
      code: 'payment_header_too_large',
      message: 'payment header longer than 100 characters',
      cause: undefined,
    });
  });

  it('says a header is not standard base64', () => {
    expect(refusal(() => decodePaymentHeader(`${encodeHeader(payload)}\n`))).toStrictEqual({
      code: 'payment_header_invalid_base64',
      message: 'header is not standard base64',
      cause: undefined,
    });
  });

  it('says a header is not UTF-8, keeping the decoder error as the cause', () => {
    const { cause, ...rest } = refusal(() =>
      decodePaymentHeader(Buffer.from([0xff, 0xfe, 0x7b]).toString('base64')),
    );
    expect(rest).toStrictEqual({ code: 'payment_header_invalid_json', message: 'header is not UTF-8' });
    expect(cause).toBeInstanceOf(TypeError);
  });

  it('says a header is not JSON, keeping the parser error as the cause', () => {
    const { cause, ...rest } = refusal(() => decodePaymentHeader(Buffer.from('not json').toString('base64')));
    expect(rest).toStrictEqual({ code: 'payment_header_invalid_json', message: 'header is not JSON' });
    expect(cause).toBeInstanceOf(SyntaxError);
  });

  it.each([
    [
      'a JSON array, by its message alone (it is about the whole payload)',
      [payload],
      '(Invalid input: expected object, received array)',
    ],
    [
      "the payload's own payload field, naming it",
      { ...payload, payload: 7 },
      '(payload: Invalid input: expected record, received number)',
    ],
    [
      'an unknown version, naming the field',
      { ...payload, x402Version: 3 },
      "(x402Version: Invalid discriminator value. Expected '2' | '1')",
    ],
    [
      'a nested field, naming its dotted path',
      { ...payload, accepted: { ...payload.accepted, amount: '1.5' } },
      '(accepted.amount: must be a decimal string of atomic units)',
    ],
  ])('names the first schema mismatch of %s', (_what, value, where) => {
    expect(refusal(() => decodePaymentHeader(encodeHeader(value)))).toStrictEqual({
      code: 'payment_payload_invalid',
      message: `payment payload does not match the x402 schema ${where}`,
      cause: undefined,
    });
  });
});

describe('decodeHeaderJson with one shared UTF-8 decoder', () => {
  /** What each call did before: a fresh fatal decoder. */
  function reference(value: string): unknown {
    const bytes = Buffer.from(value, 'base64');
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      return 'invalid utf-8';
    }
    try {
      return JSON.parse(text);
    } catch {
      return 'invalid json';
    }
  }
  const outcome = (value: string): unknown => {
    try {
      return decodeHeaderJson(value);
    } catch (error) {
      return (error as TollboothError).message === 'header is not UTF-8' ? 'invalid utf-8' : 'invalid json';
    }
  };

  it('decodes any sequence of headers as a fresh decoder would (no state carried over)', () => {
    // Valid JSON (with a BOM sometimes), truncated multi-byte characters and stray bytes, interleaved.
    const header = fc.oneof(
      fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v), 'utf8')),
      fc
        .jsonValue()
        .map((v) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(v))])),
      fc
        .string({ unit: 'grapheme', minLength: 1 })
        .map((t) => Buffer.from(JSON.stringify(t)).subarray(0, -2)),
      fc.uint8Array({ minLength: 1, maxLength: 12 }).map((b) => Buffer.from(b)),
    );
    fc.assert(
      fc.property(fc.array(header, { minLength: 1, maxLength: 6 }), (headers) => {
        for (const bytes of headers) {
          const value = bytes.toString('base64');
          expect(outcome(value)).toStrictEqual(reference(value));
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('decodeHeaderJson on a dangling base64 character', () => {
  it('refuses a length of 4n + 1 as invalid base64, though a decoder would drop the last character', () => {
    const whole = Buffer.from('{"ab":12}').toString('base64');
    expect(whole).toHaveLength(12);
    expect(decodeHeaderJson(whole)).toEqual({ ab: 12 });
    expect(() => decodeHeaderJson(`${whole}A`)).toThrow(
      expect.objectContaining({ code: 'payment_header_invalid_base64' }),
    );
  });
});
