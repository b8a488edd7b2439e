import type { HandlerResponse } from '../gate/types';
import type { PaymentIdentity } from '../scheme';
import type { LedgerEntry, LedgerPatch, LedgerState, LedgerStore, StoredResponse } from './types';

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

const IN_FLIGHT: readonly LedgerState[] = ['claimed', 'verified', 'settling'];

/**
 * The ledger semantics over any `LedgerStore`: entry construction, state changes guarded by
 * owner and state (compare-and-set), the replay window, and a per-process single-flight map so
 * duplicates of one payment inside one process wait for the first instead of polling the store.
 * Everything put in the store is plain JSON plus byte arrays, so SQLite, Redis and Postgres
 * stores work unchanged.
 */
export class SettlementLedger {
  readonly store: LedgerStore;
  private readonly options: SettlementLedgerOptions;
  private readonly flights = new Map<PaymentIdentity, Promise<void>>();

  constructor(options: SettlementLedgerOptions) {
    this.store = options.store;
    this.options = options;
  }

  owner(requestId: string): string {
    return `${this.options.instanceId}:${requestId}`;
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

  /** Moves an entry held by `owner` from one of `from` to `patch.state`; `undefined` if the CAS failed. */
  transition(entry: Pick<LedgerEntry, 'id' | 'owner'>, from: readonly LedgerState[], patch: LedgerPatch) {
    return this.store.update(
      entry.id,
      { state: from, owner: entry.owner },
      { leaseUntil: this.leaseUntil(), ...patch },
    );
  }

  /** Removes a claim that spent nothing (verify failed, handler failed). */
  release(entry: Pick<LedgerEntry, 'id' | 'owner'>): Promise<boolean> {
    return this.store.remove(entry.id, { state: ['claimed', 'verified'], owner: entry.owner });
  }

  /** End of the replay window of a settled entry (epoch ms): `validBefore`, at least `maxTimeoutSeconds`. */
  replayUntil(entry: LedgerEntry): number {
    const maxTimeout = Number(
      (entry.requirements as { maxTimeoutSeconds?: unknown })?.maxTimeoutSeconds ?? 0,
    );
    return Math.max(
      entry.validBefore * 1000,
      entry.createdAt + (Number.isFinite(maxTimeout) ? maxTimeout : 0) * 1000,
    );
  }

  isInFlight(entry: LedgerEntry): boolean {
    return IN_FLIGHT.includes(entry.state);
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

/** Flattens a handler's headers into a storable response (`set-cookie` values joined by `\n`). */
export function toStoredResponse(
  response: HandlerResponse,
  extra: Record<string, string> = {},
): StoredResponse {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    const lower = name.toLowerCase();
    headers[lower] = Array.isArray(value) ? value.join(lower === 'set-cookie' ? '\n' : ', ') : String(value);
  }
  Object.assign(headers, extra);
  return { status: response.status, headers, body: response.body };
}
