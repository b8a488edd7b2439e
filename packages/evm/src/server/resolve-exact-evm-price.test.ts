import { describe, expect, it } from 'vitest';
import { defineAsset } from '../assets/define-asset';
import { findAsset } from '../assets/find-asset';
import { EvmSchemeError } from '../errors';
import { createExactEvmScheme } from './create-exact-evm-scheme';

const devnetToken = defineAsset({
  network: 'eip155:31337',
  address: '0x5fbdb2315678afecb367f032d93f642f64180aa3',
  name: 'Tollbooth USD',
  version: '1',
  decimals: 6,
});

describe('createExactEvmScheme().resolvePrice', () => {
  const scheme = createExactEvmScheme({ assets: [devnetToken] });

  it.each([
    ['$0.01', 'eip155:8453', '10000', '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', 'USD Coin'],
    ['$0.001', 'eip155:8453', '1000', '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', 'USD Coin'],
    [0.01, 'eip155:84532', '10000', '0x036CbD53842c5426634e7929541eC2318f3dCF7e', 'USDC'],
    ['$0.0000019', 'eip155:8453', '1', '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', 'USD Coin'],
    ['2.5', 'eip155:31337', '2500000', '0x5FbDB2315678afecb367f032d93F642f64180aa3', 'Tollbooth USD'],
  ])('turns %s on %s into %s atomic units of its USDC', (price, network, amount, asset, name) => {
    const resolved = scheme.resolvePrice(price, network);
    expect(resolved).toEqual({
      amount,
      asset,
      extra: { name, version: name === 'Tollbooth USD' ? '1' : '2' },
    });
  });

  it('keeps an explicit amount and fills the EIP-712 domain of a known asset', () => {
    expect(
      scheme.resolvePrice(
        { amount: '123', asset: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913', extra: { foo: 1 } },
        'eip155:8453',
      ),
    ).toEqual({
      amount: '123',
      asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      extra: { name: 'USD Coin', version: '2', foo: 1 },
    });
  });

  it('throws invalid_amount for a network without a known asset', () => {
    expect(() => scheme.resolvePrice('$0.01', 'eip155:1')).toThrow(EvmSchemeError);
  });

  it('throws for an explicit unknown asset without an EIP-712 domain', () => {
    expect(() =>
      scheme.resolvePrice(
        { amount: '1', asset: '0x1111111111111111111111111111111111111111' },
        'eip155:8453',
      ),
    ).toThrow(/EIP-712 domain/);
  });

  it.each(['-1', '1e3', 'abc', ''])('throws invalid_amount for the price %j', (price) => {
    expect(() => scheme.resolvePrice(price, 'eip155:8453')).toThrow(
      expect.objectContaining({ code: 'invalid_amount' }),
    );
  });

  it('supports every eip155 network and nothing else', () => {
    expect(scheme.supportsNetwork('eip155:8453')).toBe(true);
    expect(scheme.supportsNetwork('eip155:31337')).toBe(true);
    expect(scheme.supportsNetwork('solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp')).toBe(false);
    expect(scheme.supportsNetwork('eip155:abc')).toBe(false);
    expect(scheme.supportsNetwork('eip155:*')).toBe(true);
  });

  it('has no reconcile without a public client', () => {
    expect(scheme.reconcile).toBeUndefined();
  });
});

describe('defineAsset and createExactEvmScheme options', () => {
  it('reports every invalid asset field at once', () => {
    try {
      defineAsset({ network: 'base', address: '0x12', name: '', version: '', decimals: 1.5 });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(EvmSchemeError);
      expect((error as EvmSchemeError).code).toBe('invalid_config');
      expect((error as EvmSchemeError).problems).toHaveLength(5);
    }
  });

  it('reports every invalid scheme option at once', () => {
    expect(() =>
      createExactEvmScheme({
        assets: [{ ...devnetToken, decimals: -1 }],
        publicClient: { base: {} as never },
        recoveryBackend: 'wasm' as never,
      }),
    ).toThrow(
      expect.objectContaining({ problems: expect.arrayContaining([expect.stringMatching(/assets\[0\]/)]) }),
    );
  });

  it('finds a custom asset before the defaults and by address', () => {
    const custom = defineAsset({ ...devnetToken, network: 'eip155:8453' });
    expect(findAsset({ network: 'eip155:8453', assets: [custom] })?.name).toBe('Tollbooth USD');
    expect(
      findAsset({ network: 'eip155:8453', address: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913' })?.name,
    ).toBe('USD Coin');
    expect(findAsset({ network: 'eip155:1' })).toBeUndefined();
  });
});
