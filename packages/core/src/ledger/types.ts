import type { PaymentIdentity } from '../scheme';

/**
 * Life of one paid request in the settlement ledger (DESIGN.md section 4):
 *
 * ```
 * claimed → verified → settling → settled
 *                         │    └→ rejected   (facilitator definitively refused the settlement)
 *                         └──────→ uncertain (timeout, 5xx, garbage, settlement_pending)
 * ```
 * `claimed`/`verified` entries are removed again when verify fails or the handler fails
 * (nothing was charged); `uncertain` goes to `settled`, back to `settling` (re-settle) or to
 * `rejected` (expired unused) through reconciliation.
 */
export type LedgerState = 'claimed' | 'verified' | 'settling' | 'settled' | 'rejected' | 'uncertain';

export const FINAL_STATES: readonly LedgerState[] = ['settled', 'rejected'];

/** An HTTP response exactly as it was (or will be) sent: replayed byte for byte. */
export interface StoredResponse {
  status: number;
  /** Lower-case header names. */
  headers: Record<string, string>;
  body: Uint8Array;
}

export interface LedgerEntry {
  id: PaymentIdentity;
  state: LedgerState;
  /** Resource URL of the route the payment was made for; a replay must be for the same resource. */
  resource: string;
  /** Route key, e.g. `GET /api/v1/fees/now`. */
  route: string;
  /** CAIP-2 network. */
  network: string;
  payer?: string;
  /** The decoded payment payload (JSON), kept so a settlement can be reconciled or retried after a restart. */
  payload: unknown;
  /** The server's own payment requirements the payment was matched against (JSON). */
  requirements: unknown;
  /** Unix seconds: end of the authorization's validity, and of the replay window. */
  validBefore: number;
  /** Transaction hash, once known (also for a broadcast but unconfirmed settlement). */
  transaction?: string;
  /** The settlement receipt (SettleResponse JSON) once settled, or the failed one when rejected. */
  receipt?: unknown;
  /** The response sent for this payment; stored before it is sent so a retry can get it again. */
  response?: StoredResponse;
  /** Why the payment was rejected, or what made it uncertain. */
  error?: { code: string; message: string };
  /** Who holds the claim (an instance id + request id); used for compare-and-set. */
  owner: string;
  /** Epoch ms until which the owner's claim on a non-final entry is valid; past it another instance may take over. */
  leaseUntil: number;
  createdAt: number;
  updatedAt: number;
  /** Epoch ms after which the entry may be purged. */
  expiresAt: number;
}

/** Fields a state change may set. `state` is always set; `updatedAt` is set by the store. */
export type LedgerPatch = Partial<Omit<LedgerEntry, 'id' | 'createdAt' | 'updatedAt'>> & {
  state: LedgerState;
};

/** Condition of a compare-and-set: the entry must be in one of these states (and held by this owner). */
export interface LedgerExpectation {
  state: readonly LedgerState[];
  owner?: string;
}

export type ClaimResult = { acquired: true; entry: LedgerEntry } | { acquired: false; entry: LedgerEntry };

export interface LedgerQuery {
  id?: PaymentIdentity;
  state?: LedgerState | readonly LedgerState[];
  transaction?: string;
  payer?: string;
  /** Newest first. Default 100. */
  limit?: number;
}

/**
 * Storage behind the settlement ledger. Every method is atomic: `claim` inserts only if no entry
 * has the id; `update` and `remove` apply only if the expectation holds (compare-and-set), so two
 * instances sharing a store can never both settle one payment. Implementations: memory (core),
 * SQLite, Redis and Postgres; all pass the same store test suite.
 */
export interface LedgerStore {
  /** Inserts `entry` unless an entry with its id exists; returns the existing one otherwise. */
  claim(entry: LedgerEntry): Promise<ClaimResult>;
  get(id: PaymentIdentity): Promise<LedgerEntry | undefined>;
  /** Applies `patch` if `expect` holds; returns the updated entry, or `undefined` if it did not hold. */
  update(
    id: PaymentIdentity,
    expect: LedgerExpectation,
    patch: LedgerPatch,
  ): Promise<LedgerEntry | undefined>;
  /** Deletes the entry if `expect` holds. */
  remove(id: PaymentIdentity, expect: LedgerExpectation): Promise<boolean>;
  /** Read-only listing for operators. */
  query(query: LedgerQuery): Promise<LedgerEntry[]>;
  /** Deletes entries whose `expiresAt` is before `now` (epoch ms); returns how many. */
  purgeExpired(now: number): Promise<number>;
  close(): Promise<void>;
}
