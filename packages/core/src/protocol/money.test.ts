import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TollboothError } from '../errors/tollbooth-error';
import { fromAtomicAmount, toAtomicAmount } from './money';

describe('toAtomicAmount', () => {
  it.each([
    ['$0.001', 6, '1000'],
    ['0.01', 6, '10000'],
    [0.005, 6, '5000'],
    [0, 6, '0'],
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

  it.each([[1.5], [-1], [256], [Number.NaN]])(
    'refuses %s decimals with invalid_amount, naming them',
    (decimals) => {
      expect(() => toAtomicAmount('1', decimals)).toThrow(
        expect.objectContaining({
          code: 'invalid_amount',
          message: `decimals must be an integer 0..255, got ${decimals}`,
        }),
      );
    },
  );

  it('takes 0 and 255 decimals', () => {
    expect(toAtomicAmount('1.9', 0)).toBe('1');
    expect(toAtomicAmount('1', 255)).toBe(`1${'0'.repeat(255)}`);
  });

  it('reads a price with spaces around, a dollar sign and digit separators', () => {
    expect(toAtomicAmount(' $1_000.5 ', 2)).toBe('100050');
    expect(toAtomicAmount('0.000_001', 6)).toBe('1');
  });

  it('says why a price is refused', () => {
    expect(() => toAtomicAmount(-0.5, 6)).toThrow(
      expect.objectContaining({
        code: 'invalid_amount',
        message: 'price must be a finite non-negative number, got -0.5',
      }),
    );
    expect(() => toAtomicAmount(1e-7, 6)).toThrow(
      expect.objectContaining({ message: 'price 1e-7 is too small or large; pass it as a string' }),
    );
    expect(() => toAtomicAmount(10n as never, 6)).toThrow(
      expect.objectContaining({
        code: 'invalid_amount',
        message: 'price must be a string or number, got bigint',
      }),
    );
    expect(() => toAtomicAmount('abc', 6)).toThrow(
      expect.objectContaining({
        code: 'invalid_amount',
        message: 'price "abc" is not a non-negative decimal',
      }),
    );
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
    expect(() => fromAtomicAmount('-5', 6)).toThrow(
      expect.objectContaining({ code: 'invalid_amount', message: 'amount "-5" is not a decimal string' }),
    );
    expect(() => fromAtomicAmount('1.5', 6)).toThrow(TollboothError);
    expect(() => fromAtomicAmount(' 15', 6)).toThrow(TollboothError);
    expect(() => fromAtomicAmount('15 ', 6)).toThrow(TollboothError);
  });

  it('rejects a negative bigint', () => {
    expect(() => fromAtomicAmount(-5n, 6)).toThrow(
      expect.objectContaining({ code: 'invalid_amount', message: 'amount must not be negative' }),
    );
  });

  it('formats a bigint, and keeps the zeros inside the fraction', () => {
    expect(fromAtomicAmount(1_000_500n, 6)).toBe('1.0005');
    expect(fromAtomicAmount(5n, 3)).toBe('0.005');
    expect(fromAtomicAmount(0n, 0)).toBe('0');
  });

  it.each([[1.5], [-1], [256]])('refuses %s decimals with invalid_amount', (decimals) => {
    expect(() => fromAtomicAmount('1', decimals)).toThrow(
      expect.objectContaining({
        code: 'invalid_amount',
        message: `decimals must be an integer 0..255, got ${decimals}`,
      }),
    );
  });

  it('takes 255 decimals', () => {
    expect(fromAtomicAmount(`1${'0'.repeat(255)}`, 255)).toBe('1');
  });
});
