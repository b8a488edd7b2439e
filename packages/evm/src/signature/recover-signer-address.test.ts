import fc from 'fast-check';
import {
  bytesToHex,
  concat,
  domainSeparator,
  encodeAbiParameters,
  getAddress,
  type Hex,
  hashTypedData,
  hexToBytes,
  keccak256,
  recoverAddress,
  toBytes,
} from 'viem';
import { privateKeyToAccount, sign } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { transferWithAuthorizationTypes } from '../constants';
import { hashTransferAuthorization } from './hash-transfer-authorization';
import { recoverSignerAddress } from './recover-signer-address';
import { getDefaultRecoveryBackend, getRecoverPublicKey } from './recovery-backends';

const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const privateKey = fc
  .uint8Array({ minLength: 32, maxLength: 32 })
  .map((bytes) => bytesToHex(bytes))
  .filter((hex) => BigInt(hex) > 0n && BigInt(hex) < N);
const digest = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => bytesToHex(bytes));

describe('recoverSignerAddress', () => {
  it('uses the native libsecp256k1 binding on this platform', () => {
    expect(getDefaultRecoveryBackend()).toBe('native');
  });

  it.each([
    ['a 63-byte signature', new Uint8Array(63), 0, new Uint8Array(32)],
    ['recovery id 2', new Uint8Array(64).fill(1), 2, new Uint8Array(32).fill(1)],
    ['a 31-byte digest', new Uint8Array(64).fill(1), 0, new Uint8Array(31)],
    ['an all-zero signature', new Uint8Array(64), 0, new Uint8Array(32).fill(1)],
  ])('throws from the native addon, called without its JavaScript checks, for %s', (_, sig, id, hash) => {
    expect(() => getRecoverPublicKey('native')(sig, id, hash)).toThrow();
  });

  it('recovers the signer with both backends, identically, for random keys and digests', async () => {
    await fc.assert(
      fc.asyncProperty(privateKey, digest, async (key, hash) => {
        const signature = await sign({ hash, privateKey: key, to: 'hex' });
        const expected = privateKeyToAccount(key).address.toLowerCase();
        expect(recoverSignerAddress({ hash, signature, backend: 'native' })).toBe(expected);
        expect(recoverSignerAddress({ hash, signature, backend: 'noble' })).toBe(expected);
      }),
      { numRuns: 150 },
    );
  });

  it('gives both backends the same answer for random garbage signatures', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 65, maxLength: 65 }), digest, async (bytes, hash) => {
        bytes[64] = 27 + (bytes[64]! % 2);
        const signature = bytesToHex(bytes);
        const native = recoverSignerAddress({ hash, signature, backend: 'native' });
        const noble = recoverSignerAddress({ hash, signature, backend: 'noble' });
        expect(native).toBe(noble);
        if (native !== undefined) {
          // Anything recovered must agree with viem's own recovery.
          expect((await recoverAddress({ hash, signature })).toLowerCase()).toBe(native);
        }
      }),
      { numRuns: 100 },
    );
  });

  it.each([
    ['64 bytes', `0x${'11'.repeat(64)}`],
    ['v = 29', `0x${'11'.repeat(64)}1d`],
    ['s = 0', `0x${'11'.repeat(32)}${'00'.repeat(32)}1b`],
    ['not hex', `0x${'zz'.repeat(65)}`],
  ] as const)('returns undefined for a signature with %s', (_label, signature) => {
    expect(
      recoverSignerAddress({ hash: keccak256('0x01'), signature: signature as `0x${string}` }),
    ).toBeUndefined();
  });

  it('accepts v as 0/1 as well as 27/28', async () => {
    const key = `0x${'42'.repeat(32)}` as const;
    const hash = keccak256('0x1234');
    const signature = await sign({ hash, privateKey: key, to: 'hex' });
    const v = Number.parseInt(signature.slice(130), 16) - 27;
    const compact = `${signature.slice(0, 130)}0${v}` as `0x${string}`;
    expect(recoverSignerAddress({ hash, signature: compact })).toBe(
      privateKeyToAccount(key).address.toLowerCase(),
    );
  });
});

/** The previous implementation (regex, viem hexToBytes, BigInt for s): the reference for the fast one. */
function recoverSignerAddressReference(hash: Hex, signature: string): string | undefined {
  if (typeof signature !== 'string' || signature.length !== 132 || !/^0x[0-9a-fA-F]{130}$/.test(signature))
    return undefined;
  const bytes = hexToBytes(signature as Hex);
  const v = bytes[64]!;
  const recovery = v >= 27 ? v - 27 : v;
  if (recovery !== 0 && recovery !== 1) return undefined;
  const s = BigInt(bytesToHex(bytes.subarray(32, 64)));
  if (s === 0n || s > N / 2n) return undefined;
  const digestBytes = hexToBytes(hash);
  if (digestBytes.length !== 32) return undefined;
  try {
    const publicKey = getRecoverPublicKey('noble')(bytes.subarray(0, 64), recovery, digestBytes);
    return keccak256(publicKey.subarray(1)).slice(-40).replace(/^/, '0x');
  } catch {
    return undefined;
  }
}

describe('recoverSignerAddress against the reference implementation', () => {
  const HALF_N = N / 2n;
  // s values around the malleability bound and zero, where the hex comparison must match BigInt's.
  const sWord = fc
    .oneof(
      fc.bigInt({ min: 0n, max: (1n << 256n) - 1n }),
      fc.bigInt({ min: HALF_N - 3n, max: HALF_N + 3n }),
      fc.constantFrom(0n, 1n, HALF_N, HALF_N + 1n, (1n << 256n) - 1n),
    )
    .map((s) => s.toString(16).padStart(64, '0'));
  const hexCase = fc.constantFrom('lower', 'upper', 'mixed');
  const withCase = (hex: string, how: string) =>
    how === 'lower'
      ? hex
      : how === 'upper'
        ? hex.toUpperCase()
        : [...hex].map((c, i) => (i % 2 ? c.toUpperCase() : c)).join('');

  it('gives the same answer for random signatures, s near the bound, any v and hex case', async () => {
    await fc.assert(
      fc.asyncProperty(
        privateKey,
        digest,
        sWord,
        fc.constantFrom(0, 1, 2, 26, 27, 28, 29, 255),
        hexCase,
        fc.boolean(),
        async (key, hash, s, v, how, real) => {
          let body: string;
          if (real) {
            const signed = await sign({ hash, privateKey: key, to: 'hex' });
            body = signed.slice(2, 130);
          } else {
            body = `${'ab'.repeat(32)}${s}`;
          }
          const signature = `0x${withCase(body, how)}${v.toString(16).padStart(2, '0')}` as Hex;
          const expected = recoverSignerAddressReference(hash, signature);
          expect(recoverSignerAddress({ hash, signature, backend: 'native' })).toBe(expected);
          expect(recoverSignerAddress({ hash, signature, backend: 'noble' })).toBe(expected);
          expect(recoverSignerAddress({ hash: hexToBytes(hash), signature })).toBe(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it.each([
    ['a short digest', '0x1234'],
    ['an odd-length digest', `0x${'1'.repeat(63)}`],
    ['an upper-case digest', `0x${'AB'.repeat(32)}`],
    ['a digest of non-hex', `0x${'zz'.repeat(32)}`],
  ] as const)('treats %s as the reference does', async (_label, hash) => {
    const key = `0x${'42'.repeat(32)}` as const;
    const signature = await sign({ hash: keccak256('0x01'), privateKey: key, to: 'hex' });
    let expected: string | undefined | Error;
    try {
      expected = recoverSignerAddressReference(hash as Hex, signature);
    } catch (error) {
      expected = error as Error;
    }
    if (expected instanceof Error) {
      expect(() => recoverSignerAddress({ hash: hash as Hex, signature })).toThrow(expected.message);
    } else {
      expect(recoverSignerAddress({ hash: hash as Hex, signature })).toBe(expected);
    }
  });
});

const TYPE_HASH = keccak256(
  toBytes(
    'TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)',
  ),
);

/** The previous implementation: viem's ABI encoder and keccak; the reference for results and errors. */
function hashTransferAuthorizationReference(
  domain: Parameters<typeof hashTransferAuthorization>[0]['domain'],
  a: Parameters<typeof hashTransferAuthorization>[0]['authorization'],
): Hex {
  const struct = keccak256(
    encodeAbiParameters(
      [
        { type: 'bytes32' },
        { type: 'address' },
        { type: 'address' },
        { type: 'uint256' },
        { type: 'uint256' },
        { type: 'uint256' },
        { type: 'bytes32' },
      ],
      [TYPE_HASH, a.from, a.to, BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore), a.nonce],
    ),
  );
  return keccak256(concat(['0x1901', domainSeparator({ domain }), struct]));
}

describe('hashTransferAuthorization against the reference implementation', () => {
  const rawAddress = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => bytesToHex(b));
  // Lower case, checksummed, upper case, a broken checksum, too short, not hex.
  const address = fc.oneof(
    { arbitrary: rawAddress, weight: 4 },
    { arbitrary: rawAddress.map((a) => getAddress(a)), weight: 6 },
    rawAddress.map((a) => `0x${a.slice(2).toUpperCase()}`),
    rawAddress.map((a) => {
      const c = getAddress(a);
      const i = c.slice(2).search(/[a-fA-F]/);
      if (i < 0) return `${c.slice(0, -1)}g`;
      const ch = c[i + 2]!;
      const flipped = ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase();
      return `${c.slice(0, i + 2)}${flipped}${c.slice(i + 3)}`;
    }),
    rawAddress.map((a) => a.slice(0, 40)),
    fc.constant('0xzz00000000000000000000000000000000000000'),
  );
  // Decimal in range, the uint256 bound, beyond it, negative, hex, padded, empty, garbage.
  const uint = fc.oneof(
    { arbitrary: fc.bigInt({ min: 0n, max: (1n << 256n) - 1n }).map(String), weight: 12 },
    fc.constantFrom(
      String((1n << 256n) - 1n),
      String(1n << 256n),
      '9'.repeat(78),
      '0'.repeat(78),
      `0${'9'.repeat(77)}`,
      '-1',
      '0x10',
      ' 7',
      '',
      '1e3',
      'abc',
    ),
  );
  const nonce = fc.oneof(
    { arbitrary: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => bytesToHex(b)), weight: 4 },
    fc
      .uint8Array({ minLength: 32, maxLength: 32 })
      .map((b) => bytesToHex(b).toUpperCase().replace('0X', '0x')),
    fc.uint8Array({ minLength: 1, maxLength: 33 }).map((b) => bytesToHex(b)),
    fc.constant(`0x${'1'.repeat(63)}`),
  );

  it('gives the same digest, or the same error, for well-formed and odd fields alike', () => {
    fc.assert(
      fc.property(
        address,
        address,
        uint,
        uint,
        uint,
        nonce,
        (from, to, value, validAfter, validBefore, n) => {
          const domain = {
            name: 'USD Coin',
            version: '2',
            chainId: 84532,
            verifyingContract: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
          } as const;
          const authorization = { from, to, value, validAfter, validBefore, nonce: n } as Parameters<
            typeof hashTransferAuthorization
          >[0]['authorization'];
          let expected: Hex | Error;
          try {
            expected = hashTransferAuthorizationReference(domain, authorization);
          } catch (error) {
            expected = error as Error;
          }
          if (expected instanceof Error) {
            let thrown: unknown;
            try {
              hashTransferAuthorization({ domain, authorization });
            } catch (error) {
              thrown = error;
            }
            expect(thrown).toBeInstanceOf(expected.constructor);
            expect((thrown as Error).message).toBe(expected.message);
          } else {
            expect(hashTransferAuthorization({ domain, authorization })).toBe(expected);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('hashTransferAuthorization', () => {
  it("equals viem's hashTypedData for random authorizations", () => {
    const address = fc.uint8Array({ minLength: 20, maxLength: 20 }).map((b) => bytesToHex(b));
    const uint = fc.bigInt({ min: 0n, max: (1n << 256n) - 1n });
    fc.assert(
      fc.property(
        address,
        address,
        uint,
        uint,
        uint,
        digest,
        fc.string({ minLength: 1 }),
        fc.integer({ min: 1, max: 2 ** 40 }),
        (from, to, value, validAfter, validBefore, nonce, name, chainId) => {
          const domain = { name, version: '2', chainId, verifyingContract: to };
          const message = { from, to, value, validAfter, validBefore, nonce };
          const expected = hashTypedData({
            domain,
            types: transferWithAuthorizationTypes,
            primaryType: 'TransferWithAuthorization',
            message,
          });
          const actual = hashTransferAuthorization({
            domain,
            authorization: {
              from,
              to,
              value: value.toString(),
              validAfter: validAfter.toString(),
              validBefore: validBefore.toString(),
              nonce,
            },
          });
          expect(actual).toBe(expected);
        },
      ),
      { numRuns: 200 },
    );
  });
});
