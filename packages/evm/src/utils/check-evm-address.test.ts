import { compileRoutes, TollboothConfigError } from '@tollbooth/core';
import { describe, expect, it } from 'vitest';
import { createExactEvmScheme } from '../server/create-exact-evm-scheme';
import { checkEvmAddress } from './check-evm-address';

const CHECKSUMMED = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
// The same address with one letter's case flipped: the EIP-55 checksum catches it.
const MISTYPED = '0x209693bc6afc0C5328bA36FaF03C514EF312287C';

describe('checkEvmAddress', () => {
  it.each([
    [CHECKSUMMED, undefined],
    [CHECKSUMMED.toLowerCase(), undefined],
    [`0x${CHECKSUMMED.slice(2).toUpperCase()}`, undefined],
    ['0xYourAddress', 'is "0xYourAddress", not an EVM address (0x and 40 hex digits)'],
    [CHECKSUMMED.slice(0, 41), `is "${CHECKSUMMED.slice(0, 41)}", not an EVM address (0x and 40 hex digits)`],
    [
      `0X${CHECKSUMMED.slice(2)}`,
      `is "0X${CHECKSUMMED.slice(2)}", not an EVM address (0x and 40 hex digits)`,
    ],
    [`0x${'0'.repeat(40)}`, 'is the zero address: whatever is paid to it is lost'],
    [
      MISTYPED,
      `"${MISTYPED}" fails its EIP-55 checksum (mixed case that does not match: a mistyped character?)`,
    ],
  ])('%s → %s', (address, problem) => {
    expect(checkEvmAddress({ address })).toBe(problem);
  });
});

describe('routes on the exact EVM scheme', () => {
  const scheme = createExactEvmScheme();
  const route = (payTo: string, price: unknown = '$0.001') => ({
    accepts: { network: 'eip155:8453', payTo, price: price as string },
  });

  it('publish a valid payTo exactly as written, lower-case included', () => {
    const table = compileRoutes(
      { 'GET /a': route(CHECKSUMMED), 'GET /b': route(CHECKSUMMED.toLowerCase()) },
      { schemes: [scheme] },
    );
    expect(table.get('GET /a')!.requirements[0]!.payTo).toBe(CHECKSUMMED);
    expect(table.get('GET /b')!.requirements[0]!.payTo).toBe(CHECKSUMMED.toLowerCase());
  });

  it('refuse a placeholder, a mistyped checksum and a mistyped asset, all in one error', () => {
    let error: unknown;
    try {
      compileRoutes(
        {
          'GET /placeholder': route('0xYourAddress'),
          'GET /typo': route(MISTYPED),
          'GET /asset': route(CHECKSUMMED, {
            amount: '1000',
            asset: '0x833589fcD6eDb6E08f4c7C32D4f71b54bdA02913',
            extra: { name: 'USD Coin', version: '2' },
          }),
        },
        { schemes: [scheme] },
      );
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(TollboothConfigError);
    expect((error as TollboothConfigError).problems).toEqual([
      'route "GET /placeholder" accepts[0]: payTo is "0xYourAddress", not an EVM address (0x and 40 hex digits)',
      `route "GET /typo" accepts[0]: payTo "${MISTYPED}" fails its EIP-55 checksum (mixed case that does not match: a mistyped character?)`,
      'route "GET /asset" accepts[0]: Invalid price: asset "0x833589fcD6eDb6E08f4c7C32D4f71b54bdA02913" fails its EIP-55 checksum (mixed case that does not match: a mistyped character?)',
    ]);
  });
});
