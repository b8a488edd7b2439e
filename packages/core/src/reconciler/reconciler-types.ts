import type { LedgerHooks } from '../ledger/hooks';
import type { SettlementLedger } from '../ledger/settlement-ledger';
import type { LedgerState } from '../ledger/types';
import type { SchemeServer } from '../scheme';

/** A pino-compatible logger (the reconciler reports each resolution and failure at warn, a released claim at info). */
export interface ReconcilerLogger {
  info?(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

export interface LedgerReconcilerOptions {
  ledger: SettlementLedger;
  /** The schemes whose chain readers judge uncertain settlements. */
  schemes: readonly SchemeServer[];
  /** How often a round runs on its own, ms; 0: only when `runOnce` is called. */
  intervalMs: number;
  /** Entries looked at per round at most. Default 100. */
  batch?: number;
  /** Longest wait before an unresolved entry is looked at again, ms. Default 60 000. */
  maxBackoffMs?: number;
  /** Epoch ms clock. */
  now: () => number;
  logger?: ReconcilerLogger | undefined;
  hooks?: LedgerHooks;
}

/** What one round did, by action. */
export interface ReconcileRound {
  /** Entries looked at. */
  examined: number;
  /** Claimed / verified entries of dead owners removed (nothing had been spent). */
  released: number;
  /** Settling entries of dead owners taken over and marked uncertain. */
  abandoned: number;
  /** Uncertain entries the chain showed settled (now settled). */
  confirmed: number;
  /** Uncertain entries whose authorization expired unused (now rejected). */
  expired: number;
  /** Uncertain entries the chain could not settle the question of yet (looked at again later). */
  unresolved: number;
  /** Entries another process changed first, or whose store write failed. */
  skipped: number;
}

/** Totals since start, plus when the last round ran. */
export interface ReconcilerStats extends ReconcileRound {
  rounds: number;
  /** Epoch ms of the last finished round, 0 before the first. */
  lastRoundAt: number;
  /** Message of the last round that failed as a whole (the store was unreachable), if the last one did. */
  lastError?: string;
}

/** The background job that resolves what requests left unresolved. */
export interface LedgerReconciler {
  /** Starts the timer (unref'd). Idempotent. */
  start(): void;
  stop(): void;
  /** Runs one round now (rounds never overlap: a call during a round waits for it). */
  runOnce(): Promise<ReconcileRound>;
  stats(): ReconcilerStats;
}

export const LEDGER_RECONCILER_DEFAULTS = Object.freeze({ batch: 100, maxBackoffMs: 60_000 });

export const RESOLVABLE: readonly LedgerState[] = ['claimed', 'verified', 'settling', 'uncertain'];

export const emptyRound = (): ReconcileRound => ({
  examined: 0,
  released: 0,
  abandoned: 0,
  confirmed: 0,
  expired: 0,
  unresolved: 0,
  skipped: 0,
});
