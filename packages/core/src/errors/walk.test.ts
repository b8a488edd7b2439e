import { describe, expect, it } from 'vitest';
import { TollboothError } from './tollbooth-error';
import { walk } from './walk';

describe('walk', () => {
  it('finds the first error of the cause chain that matches, the error itself first', () => {
    const socket = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const fetchFailed = new TypeError('fetch failed', { cause: socket });
    const outer = new TollboothError('facilitator_error', 'verify: fetch failed', { cause: fetchFailed });

    expect(walk(outer, (e) => e instanceof TypeError)).toBe(fetchFailed);
    expect(walk(outer, (e) => (e as { code?: string }).code === 'ECONNREFUSED')).toBe(socket);
    expect(walk(outer, (e) => e instanceof TollboothError)).toBe(outer);
    expect(walk(outer, (e) => e instanceof RangeError)).toBeUndefined();
  });

  it('narrows with a type guard', () => {
    const inner = new TollboothError('ledger_unavailable', 'down');
    const found = walk(
      new Error('wrapped', { cause: inner }),
      (e): e is TollboothError => e instanceof TollboothError,
    );
    expect(found?.code).toBe('ledger_unavailable');
  });

  it('stops at a cause that is not an Error, and at a cycle', () => {
    expect(
      walk(new Error('x', { cause: 'socket closed' }), (e) => e.message === 'socket closed'),
    ).toBeUndefined();
    expect(walk('not an error', () => true)).toBeUndefined();
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    (a as { cause?: unknown }).cause = b;
    const visited: string[] = [];
    const never = (e: Error): boolean => {
      visited.push(e.message);
      return false;
    };
    expect(walk(a, never)).toBeUndefined();
    expect(visited).toEqual(['a', 'b']);
  });
});
