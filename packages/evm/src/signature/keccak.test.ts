import fc from 'fast-check';
import { keccak256 } from 'viem';
import { describe, expect, it } from 'vitest';
import { isNativeKeccak, keccak256Bytes } from './keccak';

describe('keccak256Bytes', () => {
  it('uses the native binding on this platform', () => {
    // linux-x64 ships a prebuilt binding; elsewhere the JavaScript fallback is fine.
    if (process.platform === 'linux' && process.arch === 'x64') expect(isNativeKeccak).toBe(true);
  });

  it('hashes exactly like viem for any input', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (data) => {
        expect(Buffer.from(keccak256Bytes(data)).toString('hex')).toBe(keccak256(data).slice(2));
      }),
      { numRuns: 500 },
    );
  });
});
