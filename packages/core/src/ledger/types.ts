import type { StoredResponse } from '../http/types';
import type { PaymentIdentity } from '../scheme';
import type { AccessStore } from './access-types';
import type { ReservationStore } from './reservation-types';

/**
 * Life of one paid request in the settlement ledger (`docs/ledger.md#states`):
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

/** States whose entry is held by a live request (or was, until its owner died: see `leaseUntil`). */
export const IN_FLIGHT_STATES: readonly LedgerState[] = ['claimed', 'verified', 'settling'];

/**
 * Lowest response status that is an error. The ledger's invariant: a `settled` entry never holds
 * a response at or above it — an error after settlement is never stored as the paid answer.
 */
export const LEDGER_ERROR_STATUS = 400;

/**
 * What resolved an entry its own request could not finish: the background reconciler (a lost
 * settle answer, a dead instance's lease) or a retry of the payload. Kept so an operator can see
 * what happened (`tollbooth-ledger show`).
 */
export interface LedgerResolution {
  /** `reconciler`: the background job; `retry`: a retry of the exact payload. */
  by: 'reconciler' | 'retry';
  /** Instance id of the process that did it. */
  instance: string;
  /** Epoch ms of the last step. */
  at: number;
  /** State the entry was found in. */
  from: LedgerState;
  /**
   * - `abandoned`: a dead instance's `settling` entry was taken over and marked uncertain;
   * - `confirmed-on-chain`: the chain showed the transfer, the entry is settled;
   * - `settled-again`: the chain showed no transfer, the payment was settled again;
   * - `expired-unused`: the authorization expired unused, the entry is rejected;
   * - `unresolved`: the chain could not tell yet (or showed no transfer): still uncertain, looked at again later.
   */
  action: 'abandoned' | 'confirmed-on-chain' | 'settled-again' | 'expired-unused' | 'unresolved';
  /** How many times the reconciler looked at the entry. */
  attempts: number;
  /** What the chain or the facilitator said, for the operator. */
  note?: string;
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
  /** What resolved the entry after its own request could not (see {@link LedgerResolution}). */
  resolution?: LedgerResolution;
  /** Who holds the claim (an instance id + request id); used for compare-and-set. */
  owner: string;
  /**
   * Epoch ms until which the owner's claim is valid: on an in-flight entry (renewed while its
   * request runs), on a `settled` entry without a response (its handler is running), and on an
   * `uncertain` one (until which the reconciler leaves it alone). Past it another instance or the
   * reconciler may take over.
   */
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

/**
 * How a store commits one write (docs/ledger.md#durability). `durable: false` marks a write made
 * before any money moves whose loss in a crash costs nothing (the claim, `verified`, a release):
 * the store may commit it without waiting for the disk (PostgreSQL `synchronous_commit = off`,
 * SQLite `synchronous = NORMAL`). Every other write waits for the disk; a later durable write
 * makes the earlier ones durable too (one write-ahead log, written in order).
 */
export interface LedgerWriteOptions {
  /** Wait for the disk before the write returns. Default `true`. */
  durable?: boolean;
}

export type ClaimResult = { acquired: true; entry: LedgerEntry } | { acquired: false; entry: LedgerEntry };

export interface LedgerQuery {
  id?: PaymentIdentity;
  state?: LedgerState | readonly LedgerState[];
  transaction?: string;
  payer?: string;
  /** Only entries whose `leaseUntil` is before this epoch ms (abandoned or free to reconcile). */
  leaseUntilBefore?: number;
  /** Newest first. Default 100. */
  limit?: number;
}

/**
 * A client's payment identifier (the `payment-identifier` extension) bound to the request it was
 * first used for and to the payment that paid for it. The same identifier on the same request is
 * answered from that payment's entry; on another request it is a conflict (docs/errors.md).
 */
export interface IdentifierBinding {
  /** `<payer>:<identifier>`, payer lower-cased: an identifier only ever names its own payer's requests. */
  key: string;
  /** Hex SHA-256 of the request's method, canonical URL and body hash. */
  fingerprint: string;
  /** The ledger entry of the payment that answers this identifier. */
  entry: PaymentIdentity;
  /**
   * How many times the key was bound: 1 when first bound, one more each time a binding replaced
   * the one before. Set by the store; a replacement names the version it read (docs/payment-identifier.md#a-released-identifier-is-taken-once).
   */
  version: number;
  createdAt: number;
  /**
   * Epoch ms after which the binding may be purged (the entry's own `expiresAt`) — unless the entry
   * it names is kept past its expiry, then it is kept too (docs/ledger.md#purging).
   */
  expiresAt: number;
}

/** A binding as the gate asks a store to make it: the store sets its `version`. */
export type NewIdentifierBinding = Omit<IdentifierBinding, 'version'>;

/** The binding a `bindIdentifier` call found replaceable: the entry it named, at the version read. */
export type ReplacedBinding = Pick<IdentifierBinding, 'entry' | 'version'>;

/** What `bindIdentifier` did: `bound` when it stored the binding, else the binding in the way. */
export type BindResult =
  | { bound: true; binding: IdentifierBinding }
  | { bound: false; binding: IdentifierBinding };

/**
 * Storage behind the settlement ledger. Every method is atomic: `claim` inserts only if no entry
 * has the id; `update` and `remove` apply only if the expectation holds (compare-and-set), so two
 * instances sharing a store can never both settle one payment. Implementations: memory (core),
 * SQLite, Redis and Postgres; all pass the same store test suite.
 *
 * Every store enforces the ledger's invariant (`assertLedgerInvariant`): a `settled` entry never
 * holds a response with a status of 400 or more. A claim or a patch that would store one throws
 * `ledger_invariant_violation` and changes nothing; a patch to `settled` that would keep an error
 * response already stored does not apply (returns `undefined`).
 *
 * The sign-in methods ({@link AccessStore}) are optional for a store of your own: the built-in
 * stores have them, and a gate with a sign-in route refuses to start without them. So are the
 * balance reservations ({@link ReservationStore}): a gate with a `reserveBalance` route needs them.
 */
export interface LedgerStore extends Partial<AccessStore>, Partial<ReservationStore> {
  /** Inserts `entry` unless an entry with its id exists; returns the existing one otherwise. */
  claim(entry: LedgerEntry, options?: LedgerWriteOptions): Promise<ClaimResult>;
  get(id: PaymentIdentity): Promise<LedgerEntry | undefined>;
  /** Applies `patch` if `expect` holds; returns the updated entry, or `undefined` if it did not hold. */
  update(
    id: PaymentIdentity,
    expect: LedgerExpectation,
    patch: LedgerPatch,
    options?: LedgerWriteOptions,
  ): Promise<LedgerEntry | undefined>;
  /** Deletes the entry if `expect` holds. */
  remove(id: PaymentIdentity, expect: LedgerExpectation, options?: LedgerWriteOptions): Promise<boolean>;
  /** Read-only listing for operators. */
  query(query: LedgerQuery): Promise<LedgerEntry[]>;
  /**
   * Binds a payment identifier, atomically. Without `replaces`, stores `binding` (version 1) only
   * when its key is not bound. With `replaces`, also takes the key over from the binding read
   * before — only if the key is still bound to `replaces.entry` at `replaces.version`, and that
   * entry is absent or `rejected` (it charged nothing), or is `binding.entry` itself (the caller
   * just claimed it again); the stored binding's version is one more. Two callers that read one
   * binding can therefore never both replace it (docs/payment-identifier.md#a-released-identifier-is-taken-once).
   */
  bindIdentifier(binding: NewIdentifierBinding, replaces?: ReplacedBinding): Promise<BindResult>;
  getIdentifier(key: string): Promise<IdentifierBinding | undefined>;
  /**
   * Deletes entries and identifier bindings whose `expiresAt` is before `now` (epoch ms), except
   * those docs/ledger.md#purging keeps, and expired access grants and nonce claims (`AccessStore`);
   * returns how many.
   */
  purgeExpired(now: number): Promise<number>;
  close(): Promise<void>;
}
