import { TollboothError } from '../errors/tollbooth-error';
import { LEDGER_ERROR_STATUS, type LedgerEntry, type LedgerPatch } from './types';

/**
 * The ledger's invariant, checked by every store before a claim or an update: an entry that is
 * `settled` never holds a response with a status of 400 or more. The payer paid for the answer
 * the entry holds; an error produced after settlement (a failing handler, a crash) is never stored
 * as that answer, so a retry gets the real answer (or runs the handler again) instead of the error
 * forever.
 *
 * @throws {TollboothError} `ledger_invariant_violation` when `fields` would store such a response.
 * @example
 * assertLedgerInvariant({ state: 'settled', response: { status: 503, headers: {}, body } }); // throws
 */
export function assertLedgerInvariant(
  fields: Pick<Partial<LedgerEntry> | LedgerPatch, 'state' | 'response'>,
): void {
  if (
    fields.state === 'settled' &&
    fields.response !== undefined &&
    fields.response.status >= LEDGER_ERROR_STATUS
  ) {
    throw new TollboothError(
      'ledger_invariant_violation',
      `a settled entry cannot hold a ${fields.response.status} response: an error after settlement is never the paid answer`,
    );
  }
}

/**
 * Whether a patch to `settled` without a response of its own must also find no error response
 * already stored (stores add this to their compare-and-set condition).
 */
export function settlesWithStoredResponse(patch: Pick<LedgerPatch, 'state' | 'response'>): boolean {
  return patch.state === 'settled' && patch.response === undefined;
}
