import { describe, expect, it } from 'vitest';
import { bearerMatches } from './metrics-access';

const TOKEN = '0123456789abcdef0123456789abcdef';

describe('bearerMatches', () => {
  it.each([
    [`Bearer ${TOKEN}`, true],
    [`bearer ${TOKEN}`, true],
    [`Bearer  ${TOKEN} `, true],
    [undefined, false],
    ['', false],
    ['Bearer', false],
    ['Bearer ', false],
    [`Basic ${TOKEN}`, false],
    [TOKEN, false],
    [`Bearer ${TOKEN.slice(0, -1)}`, false],
    [`Bearer ${TOKEN}0`, false],
    [`Bearer ${TOKEN.toUpperCase()}`, false],
    [`Bearer ${TOKEN} extra`, false],
  ])('answers %j with %s', (authorization, expected) => {
    expect(bearerMatches(authorization, TOKEN)).toBe(expected);
  });
});
