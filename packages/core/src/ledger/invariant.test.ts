import { describe, expect, it } from 'vitest';
import type { StoredResponse } from '../http/types';
import { assertLedgerInvariant, settlesWithStoredResponse } from './invariant';
import type { LedgerState } from './types';

const answer = (status: number): StoredResponse => ({ status, headers: {}, body: new Uint8Array([1]) });

describe('assertLedgerInvariant', () => {
  it.each([400, 402, 500, 503])(
    'refuses a settled entry holding a %i response, naming the status',
    (status) => {
      let thrown: unknown;
      try {
        assertLedgerInvariant({ state: 'settled', response: answer(status) });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({
        code: 'ledger_invariant_violation',
        message: `a settled entry cannot hold a ${status} response: an error after settlement is never the paid answer`,
      });
    },
  );

  it.each([200, 204, 302, 399])('takes a settled entry holding a %i response', (status) => {
    expect(() => assertLedgerInvariant({ state: 'settled', response: answer(status) })).not.toThrow();
  });

  it('takes a settled entry without a response (its handler runs on the next retry)', () => {
    expect(() => assertLedgerInvariant({ state: 'settled' })).not.toThrow();
  });

  it.each(['claimed', 'verified', 'settling', 'rejected', 'uncertain'] as const)(
    'takes a %s entry holding an error response',
    (state: LedgerState) => {
      expect(() => assertLedgerInvariant({ state, response: answer(500) })).not.toThrow();
    },
  );
});

describe('settlesWithStoredResponse', () => {
  it('is true only for a change to settled that brings no response of its own', () => {
    expect(settlesWithStoredResponse({ state: 'settled' })).toBe(true);
    expect(settlesWithStoredResponse({ state: 'settled', response: answer(200) })).toBe(false);
    expect(settlesWithStoredResponse({ state: 'uncertain' })).toBe(false);
    expect(settlesWithStoredResponse({ state: 'rejected', response: answer(402) })).toBe(false);
  });
});
