import type { PaymentIdentity } from '../scheme';
import type { LedgerState, LedgerStore } from './types';

export interface LeaseKeeperOptions {
  store: LedgerStore;
  /** Length of a lease, ms: each renewal sets `leaseUntil` to now + this. */
  leaseMs: number;
  /** How often held leases are renewed, ms. Default a third of `leaseMs`. */
  renewEveryMs?: number;
  /** Epoch ms clock. */
  now: () => number;
  /** A renewal failed to reach the store (it is tried again on the next round). */
  onError?: (error: unknown, id: PaymentIdentity) => void;
}

interface Held {
  id: PaymentIdentity;
  owner: string;
  state: LedgerState;
  /** The renewal in flight, if any. */
  renewing?: Promise<void>;
}

/**
 * Keeps the leases of the entries this process is working on alive: while a request holds an
 * entry (claimed, verified, settling, or settled with its handler running), its `leaseUntil` is
 * pushed forward every `renewEveryMs`, so leases can be short (seconds) and an entry whose
 * process died is free again soon after. A renewal is a compare-and-set on the entry's state and
 * owner that changes only `leaseUntil`: when the gate has moved the entry on (or another instance
 * took it over), the renewal does not apply and nothing is lost. One unref'd timer per keeper,
 * running only while something is held.
 *
 * @example
 * const keeper = new LeaseKeeper({ store, leaseMs: 10_000, now: Date.now });
 * keeper.hold(entry, 'claimed');
 * keeper.moved(entry, 'verified');
 * await keeper.letGo(entry);
 */
export class LeaseKeeper {
  private readonly held = new Map<string, Held>();
  private readonly options: LeaseKeeperOptions;
  private readonly renewEveryMs: number;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(options: LeaseKeeperOptions) {
    this.options = options;
    this.renewEveryMs = options.renewEveryMs ?? Math.max(1, Math.floor(options.leaseMs / 3));
  }

  /** How many leases are held now. */
  get size(): number {
    return this.held.size;
  }

  /** Starts renewing the lease of an entry this process holds in `state` (again: updates the state). */
  hold(entry: { id: PaymentIdentity; owner: string }, state: LedgerState): void {
    const key = keyOf(entry);
    const existing = this.held.get(key);
    if (existing) {
      existing.state = state;
      return;
    }
    this.held.set(key, { id: entry.id, owner: entry.owner, state });
    if (!this.timer) {
      this.timer = setInterval(() => this.renewAll(), this.renewEveryMs);
      this.timer.unref();
    }
  }

  /** The entry moved to `state`: later renewals expect that state. No-op when it is not held. */
  moved(entry: { id: PaymentIdentity; owner: string }, state: LedgerState): void {
    const held = this.held.get(keyOf(entry));
    if (held) held.state = state;
  }

  /** Whether the entry's lease is being renewed. */
  holds(entry: { id: PaymentIdentity; owner: string }): boolean {
    return this.held.has(keyOf(entry));
  }

  /**
   * Stops renewing; resolves once a renewal in flight has finished, so a write that follows (say,
   * one that frees the lease) cannot be overtaken by it.
   */
  async letGo(entry: { id: PaymentIdentity; owner: string }): Promise<void> {
    const key = keyOf(entry);
    const held = this.held.get(key);
    if (!held) return;
    this.held.delete(key);
    if (this.held.size === 0) this.stopTimer();
    await held.renewing;
  }

  /** Renews every held lease once, now (the timer calls this). */
  async renewAll(): Promise<void> {
    const rounds: Promise<void>[] = [];
    for (const held of this.held.values()) {
      if (held.renewing) continue;
      const renewing = this.renew(held).finally(() => {
        held.renewing = undefined;
      });
      held.renewing = renewing;
      rounds.push(renewing);
    }
    await Promise.all(rounds);
  }

  /** Stops the timer and forgets every lease (they run out on their own). */
  stop(): void {
    this.held.clear();
    this.stopTimer();
  }

  private async renew(held: Held): Promise<void> {
    const { store, leaseMs, now } = this.options;
    try {
      await store.update(
        held.id,
        { state: [held.state], owner: held.owner },
        { state: held.state, leaseUntil: now() + leaseMs },
      );
    } catch (error) {
      this.options.onError?.(error, held.id);
    }
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

function keyOf(entry: { id: PaymentIdentity; owner: string }): string {
  return `${entry.owner}\n${entry.id}`;
}
