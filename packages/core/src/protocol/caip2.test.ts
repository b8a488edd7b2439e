import { describe, expect, it } from 'vitest';
import { checkNetwork, isCaip2Network } from './caip2';

describe('isCaip2Network', () => {
  it.each([
    'eip155:8453',
    'eip155:1',
    'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
    'abc:x',
    'abcdefgh:x',
    `eip155:${'a'.repeat(32)}`,
    'cosmos:cosmoshub-4',
    'my-ns:ref_1',
  ])('accepts %s', (network) => {
    expect(isCaip2Network(network)).toBe(true);
  });

  it.each([
    'base',
    '',
    'ab:1',
    'abcdefghi:1',
    `eip155:${'a'.repeat(33)}`,
    'eip155:',
    ':8453',
    'EIP155:8453',
    'eip155:8453 ',
    ' eip155:8453',
    'eip155:84.53',
    'eip155:8453:1',
  ])('refuses %j', (network) => {
    expect(isCaip2Network(network)).toBe(false);
  });

  it('refuses what is not a string, even when it reads as one', () => {
    // A regex test would turn these into 'eip155:8453' and accept them.
    expect(isCaip2Network(['eip155:8453'])).toBe(false);
    expect(isCaip2Network({ toString: () => 'eip155:8453' })).toBe(false);
    expect(isCaip2Network(8453)).toBe(false);
    expect(isCaip2Network(undefined)).toBe(false);
  });
});

describe('checkNetwork', () => {
  it('has nothing to say about a CAIP-2 chain id', () => {
    expect(checkNetwork('network', 'eip155:8453')).toBeUndefined();
  });

  it('says a missing network is required', () => {
    const required = 'accepts.network is required (a CAIP-2 chain id such as eip155:8453)';
    expect(checkNetwork('accepts.network', undefined)).toBe(required);
    expect(checkNetwork('accepts.network', '')).toBe(required);
    expect(checkNetwork('accepts.network', ['eip155:8453'])).toBe(required);
  });

  it('suggests the CAIP-2 form of an x402 v1 name', () => {
    expect(checkNetwork('network', 'base')).toBe(
      'network "base" is an x402 v1 name: write it as the CAIP-2 chain id eip155:8453',
    );
    expect(checkNetwork('network', 'base-sepolia')).toBe(
      'network "base-sepolia" is an x402 v1 name: write it as the CAIP-2 chain id eip155:84532',
    );
  });

  it('says what a CAIP-2 chain id looks like for anything else', () => {
    expect(checkNetwork('network', 'eip155')).toBe(
      'network "eip155" is not a CAIP-2 chain id (namespace:reference, e.g. eip155:8453)',
    );
  });
});
