import { describe, expect, it } from 'vitest';
import { mergeHeaderList } from './header-list';

describe('mergeHeaderList', () => {
  it.each([
    ['missing', undefined],
    ['null', null],
    ['empty', ''],
  ])('gives the added names when the existing value is %s', (_label, existing) => {
    expect(mergeHeaderList(existing, 'PAYMENT-REQUIRED, X-Trace')).toBe('PAYMENT-REQUIRED, X-Trace');
  });

  it('appends the names the existing value lacks, trimmed', () => {
    expect(mergeHeaderList('X-Trace', 'PAYMENT-REQUIRED,  X-Trace ,PAYMENT-RESPONSE ')).toBe(
      'X-Trace, PAYMENT-REQUIRED, PAYMENT-RESPONSE',
    );
  });

  it('compares names case-insensitively and ignores spaces around them', () => {
    expect(mergeHeaderList(' payment-required ,x-trace', 'PAYMENT-REQUIRED, X-Trace')).toBe(
      ' payment-required ,x-trace',
    );
  });

  it('keeps the existing value as it is when it lacks nothing', () => {
    expect(mergeHeaderList('A, B, C', 'C, A')).toBe('A, B, C');
    expect(mergeHeaderList('A, B', 'A, B')).toBe('A, B');
  });

  it('joins a list of values as frameworks hold them', () => {
    expect(mergeHeaderList(['Accept', 'Origin'], 'Origin, Accept-Encoding')).toBe(
      'Accept, Origin, Accept-Encoding',
    );
  });

  it('reads a value that is no string as its text', () => {
    expect(mergeHeaderList(42, 'X-A')).toBe('42, X-A');
  });
});
