import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TollboothError } from '../errors/tollbooth-error';
import { fromAtomicAmount, toAtomicAmount } from './money';

describe('toAtomicAmount', () => {
  it.each([
    ['$0.001', 6, '1000'],
    ['0.01', 6, '10000'],
    [0.005, 6, '5000'],
    ['1', 6, '1000000'],
    ['$12.3456789', 6, '12345678'],
    ['0.0000009', 6, '0'],
    ['.5', 2, '50'],
    ['7.', 0, '7'],
    [0.1 + 0.2, 6, '300000'],
    ['123456789012345678901234567890', 18, '123456789012345678901234567890000000000000000000'],
  ] as const)('converts %s with %i decimals to %s', (price, decimals, expected) => {
    expect(toAtomicAmount(price, decimals)).toBe(expected);
  });

  it.each([
    ['-1'],
    ['$-0.01'],
    [-0.5],
    [Number.NaN],
    [Number.POSITIVE_INFINITY],
    ['1e-3'],
    ['1e3'],
    [1e-7],
    [1e21],
    ['abc'],
    [''],
    ['$'],
    ['0x10'],
    ['1.2.3'],
    [' 1 2'],
  ])('rejects %s', (price) => {
    expect(() => toAtomicAmount(price as string, 6)).toThrow(TollboothError);
  });

  it('truncates instead of rounding, for any decimal string', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 30n }),
        fc.integer({ min: 0, max: 12 }),
        fc.integer({ min: 0, max: 12 }),
        (units, shown, decimals) => {
          const text = fromAtomicAmount(units, shown);
          const atomic = BigInt(toAtomicAmount(text, decimals));
          // Scaling `shown` decimals to `decimals` is exact when widening and floors when narrowing.
          const expected =
            decimals >= shown
              ? units * 10n ** BigInt(decimals - shown)
              : units / 10n ** BigInt(shown - decimals);
          expect(atomic).toBe(expected);
        },
      ),
    );
  });
});

describe('fromAtomicAmount', () => {
  it.each([
    ['1000', 6, '0.001'],
    ['10000', 6, '0.01'],
    ['1000000', 6, '1'],
    ['0', 6, '0'],
    ['123', 0, '123'],
  ] as const)('formats %s with %i decimals as %s', (amount, decimals, expected) => {
    expect(fromAtomicAmount(amount, decimals)).toBe(expected);
  });

  it('rejects non-decimal strings', () => {
    expect(() => fromAtomicAmount('-5', 6)).toThrow(TollboothError);
    expect(() => fromAtomicAmount('1.5', 6)).toThrow(TollboothError);
  });
});
