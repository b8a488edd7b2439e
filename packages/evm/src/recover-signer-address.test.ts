import fc from 'fast-check';
import { bytesToHex, hashTypedData, keccak256, recoverAddress } from 'viem';
import { privateKeyToAccount, sign } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { transferWithAuthorizationTypes } from './constants';
import { hashTransferAuthorization } from './signature/hash-transfer-authorization';
import { recoverSignerAddress } from './signature/recover-signer-address';
import { getDefaultRecoveryBackend } from './signature/recovery-backends';

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
