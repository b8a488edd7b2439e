import type { PaymentIdentity } from '../scheme';
import { LeaseKeeper } from './lease-keeper';
import {
  type BindResult,
  type ClaimResult,
  type IdentifierBinding,
  IN_FLIGHT_STATES,
  type LedgerEntry,
  type LedgerPatch,
  type LedgerQuery,
  type LedgerResolution,
  type LedgerState,
  type LedgerStore,
  type LedgerWriteOptions,
  type NewIdentifierBinding,
  type ReplacedBinding,
} from './types';

/** A write whose loss in a crash costs nothing (docs/ledger.md#durability). */
export const RELAXED: LedgerWriteOptions = Object.freeze({ durable: false });

/** Settings of the settlement ledger semantics. */
export interface SettlementLedgerOptions {
  store: LedgerStore;
  /** Identifies this process in `owner` (compare-and-set). Default: a random id. */
  instanceId: string;
  /** How long a claim on a non-final entry holds before another instance may take over, ms. */
  leaseMs: number;
  /** How long an entry is kept after its authorization expires, ms. */
  retentionMs: number;
  /** Epoch ms clock. */
  now: () => number;
  /** A lease renewal failed to reach the store. */
  onLeaseError?: (error: unknown, id: PaymentIdentity) => void;
}

export interface NewEntryInput {
  id: PaymentIdentity;
  owner: string;
  resource: string;
  route: string;
  network: string;
  payer: string;
  payload: unknown;
  requirements: unknown;
  validBefore: number;
}

/**
 * The ledger semantics over any `LedgerStore`: entry construction, state changes guarded by
 * owner and state (compare-and-set), the replay window, and a per-process single-flight map so
 * duplicates of one payment inside one process wait for the first instead of polling the store.
 * Everything put in the store is plain JSON plus byte arrays, so SQLite, Redis and Postgres
 * stores work unchanged.
 */
export class SettlementLedger {
  readonly store: LedgerStore;
  /** Renews the leases of the entries this process works on. */
  readonly leases: LeaseKeeper;
  private readonly options: SettlementLedgerOptions;
  private readonly flights = new Map<PaymentIdentity, Promise<void>>();

  constructor(options: SettlementLedgerOptions) {
    this.store = options.store;
    this.options = options;
    this.leases = new LeaseKeeper({
      store: options.store,
      leaseMs: options.leaseMs,
      now: options.now,
      ...(options.onLeaseError ? { onError: options.onLeaseError } : {}),
    });
  }

  get instanceId(): string {
    return this.options.instanceId;
  }

  get leaseMs(): number {
    return this.options.leaseMs;
  }

  owner(requestId: string): string {
    return `${this.options.instanceId}:${requestId}`;
  }

  /** Whether an entry's owner is this instance (a request of this process, or of an earlier life of it). */
  isOwnInstance(entry: Pick<LedgerEntry, 'owner'>): boolean {
    return entry.owner.startsWith(`${this.options.instanceId}:`);
  }

  now(): number {
    return this.options.now();
  }

  leaseUntil(): number {
    return this.options.now() + this.options.leaseMs;
  }

  newEntry(input: NewEntryInput): LedgerEntry {
    const now = this.options.now();
    return {
      id: input.id,
      state: 'claimed',
      resource: input.resource,
      route: input.route,
      network: input.network,
      payer: input.payer,
      payload: input.payload,
      requirements: input.requirements,
      validBefore: input.validBefore,
      owner: input.owner,
      leaseUntil: now + this.options.leaseMs,
      createdAt: now,
      updatedAt: now,
      expiresAt: input.validBefore * 1000 + this.options.retentionMs,
    };
  }

  /**
   * Moves an entry held by `owner` from one of `from` to `patch.state`; `undefined` if the CAS
   * failed. The lease is extended (unless the patch sets it) and, when this process renews it,
   * followed to the new state.
   */
  async transition(
    entry: Pick<LedgerEntry, 'id' | 'owner'>,
    from: readonly LedgerState[],
    patch: LedgerPatch,
    options?: LedgerWriteOptions,
  ): Promise<LedgerEntry | undefined> {
    const updated = await this.store.update(
      entry.id,
      { state: from, owner: entry.owner },
      { leaseUntil: this.leaseUntil(), ...patch },
      options,
    );
    if (updated) this.leases.moved(entry, patch.state);
    return updated;
  }

  /**
   * Takes an entry over from its current owner (compare-and-set on state and owner): the new
   * owner holds it with a fresh lease. `undefined` when someone else changed it first.
   */
  takeOver(
    entry: LedgerEntry,
    owner: string,
    patch: Partial<LedgerPatch> = {},
  ): Promise<LedgerEntry | undefined> {
    return this.store.update(
      entry.id,
      { state: [entry.state], owner: entry.owner },
      { state: entry.state, owner, leaseUntil: this.leaseUntil(), ...patch },
    );
  }

  /** The entry of a payment, if the ledger has one. */
  get(id: PaymentIdentity): Promise<LedgerEntry | undefined> {
    return this.store.get(id);
  }

  /**
   * Claims a new entry (from `newEntry`), or gives back the one already there. Not durable: no
   * money moved yet, so a claim a crash loses costs nothing (the retry claims again).
   */
  claim(entry: LedgerEntry): Promise<ClaimResult> {
    return this.store.claim(entry, RELAXED);
  }

  /** Entries matching a query (the reconciler's rounds). */
  query(query: LedgerQuery): Promise<LedgerEntry[]> {
    return this.store.query(query);
  }

  /** The binding of a payment identifier key, if there is one. */
  identifier(key: string): Promise<IdentifierBinding | undefined> {
    return this.store.getIdentifier(key);
  }

  /**
   * Binds a payment identifier to a payment, or takes it over from the binding read before
   * (`replaces`) if that one still holds and named a payment that charged nothing; `bound: false`
   * with the binding in the way otherwise.
   */
  bindIdentifier(binding: NewIdentifierBinding, replaces?: ReplacedBinding): Promise<BindResult> {
    return this.store.bindIdentifier(binding, replaces);
  }

  /**
   * Takes over an in-flight entry whose owner stopped renewing its lease. A claim that spent
   * nothing is removed; a settlement it started may have landed, so that entry becomes uncertain
   * with `resolution`, free at once. Whether this call made the change.
   */
  async adoptAbandoned(entry: LedgerEntry, resolution: LedgerResolution): Promise<boolean> {
    if (entry.state !== 'settling') return this.dropClaim(entry);
    const taken = await this.store.update(
      entry.id,
      { state: ['settling'], owner: entry.owner },
      { state: 'uncertain', leaseUntil: 0, resolution },
    );
    return taken !== undefined;
  }

  /** Removes an entry still in the state and with the owner it was read with. */
  dropClaim(entry: Pick<LedgerEntry, 'id' | 'owner' | 'state'>): Promise<boolean> {
    return this.store.remove(entry.id, { state: [entry.state], owner: entry.owner });
  }

  /** Whether the lease on an entry ran out (its owner died or hung) at `now`. */
  leaseEnded(entry: Pick<LedgerEntry, 'leaseUntil'>, now = this.options.now()): boolean {
    return entry.leaseUntil < now;
  }

  /**
   * Removes an entry that spent nothing, still held by its owner: by default a claim (verify
   * failed, handler failed); `from` names other states a verb knows charged nothing. A release
   * from `claimed`/`verified` is not durable: a crash that loses it leaves an unspent claim whose
   * lease runs out (the retry or the purge drops it). A release from a state written durably
   * (`settling`, the facilitator provably never reached) waits for the disk like the write it
   * undoes: lost, it would bring back a `settling` row the reconciler can only call `uncertain`
   * until the authorization expires.
   */
  release(
    entry: Pick<LedgerEntry, 'id' | 'owner'>,
    from: readonly LedgerState[] = ['claimed', 'verified'],
  ): Promise<boolean> {
    const relaxed = from.every((state) => state === 'claimed' || state === 'verified');
    return this.store.remove(entry.id, { state: from, owner: entry.owner }, relaxed ? RELAXED : undefined);
  }

  /**
   * End of the replay window of a settled entry (epoch ms): `validBefore`, at least
   * `maxTimeoutSeconds` from the first request. The window bounds only an answer its own request
   * delivered: an entry resolved later (by the reconciler or a retry: it has a `resolution`) holds
   * an answer its first request never sent, and is replayed as long as the ledger keeps it
   * (`expiresAt`, the retention).
   */
  replayUntil(entry: LedgerEntry): number {
    if (entry.resolution) return Math.max(entry.expiresAt, this.windowOf(entry));
    return this.windowOf(entry);
  }

  private windowOf(entry: LedgerEntry): number {
    const maxTimeout = Number(
      (entry.requirements as { maxTimeoutSeconds?: unknown })?.maxTimeoutSeconds ?? 0,
    );
    return Math.max(
      entry.validBefore * 1000,
      entry.createdAt + (Number.isFinite(maxTimeout) ? maxTimeout : 0) * 1000,
    );
  }

  isInFlight(entry: LedgerEntry): boolean {
    return IN_FLIGHT_STATES.includes(entry.state);
  }

  /** The in-process flight of a payment, if one is running. */
  flight(id: PaymentIdentity): Promise<void> | undefined {
    return this.flights.get(id);
  }

  /** Starts an in-process flight; call the returned function exactly once when it ends. */
  startFlight(id: PaymentIdentity): () => void {
    let end!: () => void;
    const promise = new Promise<void>((resolve) => {
      end = resolve;
    });
    this.flights.set(id, promise);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      if (this.flights.get(id) === promise) this.flights.delete(id);
      end();
    };
  }
}
