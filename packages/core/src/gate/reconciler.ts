import { type SettlementLedger, toPaidResponse } from '../ledger/settlement-ledger';
import type { LedgerEntry, LedgerPatch, LedgerResolution, LedgerState } from '../ledger/types';
import type { SettleResponse } from '../protocol/schemas';
import type { SchemeServer } from '../scheme';
import { askChain, questionFor } from './ask-chain';
import type { GateHooks } from './types';

/** A pino-compatible logger (the reconciler reports what it did at info, failures at warn). */
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
  hooks?: Pick<GateHooks, 'onTransfer' | 'onResolved'>;
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

const RESOLVABLE: readonly LedgerState[] = ['claimed', 'verified', 'settling', 'uncertain'];

const emptyRound = (): ReconcileRound => ({
  examined: 0,
  released: 0,
  abandoned: 0,
  confirmed: 0,
  expired: 0,
  unresolved: 0,
  skipped: 0,
});

/**
 * The receipt header of a payment resolved without its request: `X-PAYMENT-RESPONSE` for a v1
 * payload, else `PAYMENT-RESPONSE` (a retry resolving it itself uses the header it was sent in).
 */
export function receiptHeaderOf(
  entry: Pick<LedgerEntry, 'payload'>,
): 'payment-response' | 'x-payment-response' {
  return (entry.payload as { x402Version?: unknown } | undefined)?.x402Version === 1
    ? 'x-payment-response'
    : 'payment-response';
}

/**
 * Creates the ledger reconciler: every `intervalMs` it looks for entries nobody is working on —
 * leases that ran out (their process died or hung) and uncertain settlements — and resolves them
 * without waiting for the payer to retry:
 *
 * - `claimed` / `verified` of a dead owner: removed (nothing was spent; a retry starts afresh);
 * - `settling` of a dead owner: marked uncertain (`abandoned`), then judged like any uncertain one;
 * - `uncertain`: the scheme's chain reader decides. Settled on chain → `settled` with the receipt
 *   (and the paid answer, when the handler's response was stored: a retry gets it byte for byte;
 *   a route that settles before its handler runs it on the next retry). Expired unused →
 *   `rejected` (`payment_expired`). Anything else stays uncertain and is looked at again with a
 *   growing delay; a retry of the exact payload settles it again when the chain shows no transfer.
 *
 * On the first round an instance also resumes its own entries from an earlier life (same
 * `instanceId`, not touched since it started), without waiting for their leases to run out.
 * The reconciler never settles anything itself: only a retry of the payer's payload does.
 */
export function createLedgerReconciler(options: LedgerReconcilerOptions): LedgerReconciler {
  const { ledger, schemes, now, logger } = options;
  const batch = options.batch ?? LEDGER_RECONCILER_DEFAULTS.batch;
  const maxBackoffMs = options.maxBackoffMs ?? LEDGER_RECONCILER_DEFAULTS.maxBackoffMs;
  const owner = ledger.owner('reconciler');
  const startedAt = now();
  const totals: ReconcilerStats = { ...emptyRound(), rounds: 0, lastRoundAt: 0 };
  let firstRound = true;
  let running: Promise<ReconcileRound> | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;

  const backoff = (attempts: number) =>
    Math.min(maxBackoffMs, Math.max(options.intervalMs, 1_000) * 2 ** Math.min(attempts - 1, 16));

  function resolution(
    entry: LedgerEntry,
    from: LedgerState,
    action: LedgerResolution['action'],
    note?: string,
  ): LedgerResolution {
    const attempts = (entry.resolution?.attempts ?? 0) + (action === 'abandoned' ? 0 : 1);
    return {
      by: 'reconciler',
      instance: ledger.instanceId,
      at: now(),
      from,
      action,
      attempts,
      ...(note ? { note } : {}),
    };
  }

  function report(entry: LedgerEntry, done: LedgerResolution) {
    logger?.info?.(
      { id: entry.id, route: entry.route, action: done.action, from: done.from, note: done.note },
      'ledger reconciler resolved an entry',
    );
    try {
      options.hooks?.onResolved?.(entry, done);
    } catch (error) {
      logger?.warn({ err: error }, 'gate hook failed');
    }
  }

  /** Judges an uncertain entry this reconciler holds, and records the verdict. */
  async function judge(entry: LedgerEntry, from: LedgerState, round: ReconcileRound): Promise<void> {
    const question = questionFor(entry, schemes);
    const answer = question
      ? await askChain(question, now())
      : { status: 'unknown' as const, message: `no scheme serves the requirements of ${entry.route}` };
    let patch: LedgerPatch;
    let done: LedgerResolution;
    let receipt: SettleResponse | undefined;
    switch (answer.status) {
      case 'settled': {
        receipt = answer.receipt;
        done = resolution(entry, from, 'confirmed-on-chain', `transfer ${receipt.transaction}`);
        patch = {
          state: 'settled',
          receipt,
          ...(receipt.transaction ? { transaction: receipt.transaction } : {}),
          ...(entry.response
            ? { response: toPaidResponse(entry.response, receiptHeaderOf(entry), receipt) }
            : {}),
          // Free at once: a route that settles before its handler runs it on the next retry.
          leaseUntil: 0,
          resolution: done,
        };
        break;
      }
      case 'expired':
        done = resolution(entry, from, 'expired-unused', 'the authorization expired unused');
        patch = {
          state: 'rejected',
          error: { code: 'payment_expired', message: 'the authorization expired unused' },
          leaseUntil: 0,
          resolution: done,
        };
        break;
      default: {
        const note =
          answer.status === 'unsettled'
            ? 'no transfer on chain yet; a retry of the exact payload settles it again'
            : answer.message;
        done = resolution(entry, from, 'unresolved', note);
        patch = { state: 'uncertain', leaseUntil: now() + backoff(done.attempts), resolution: done };
      }
    }
    const recorded = await ledger.transition({ id: entry.id, owner }, ['uncertain'], patch);
    if (!recorded) {
      round.skipped += 1;
      return;
    }
    if (done.action === 'confirmed-on-chain') {
      round.confirmed += 1;
      try {
        options.hooks?.onTransfer?.({
          id: entry.id,
          route: entry.route,
          network: entry.network,
          payer: entry.payer,
          transaction: receipt?.transaction,
          via: 'reconciler',
        });
      } catch (error) {
        logger?.warn({ err: error }, 'gate hook failed');
      }
    } else if (done.action === 'expired-unused') round.expired += 1;
    else round.unresolved += 1;
    report(entry, done);
  }

  async function resolve(entry: LedgerEntry, round: ReconcileRound): Promise<void> {
    round.examined += 1;
    if (entry.state === 'claimed' || entry.state === 'verified') {
      // Nothing was spent: verify passed at most. A retry claims it afresh.
      if (await ledger.dropClaim(entry)) {
        round.released += 1;
        logger?.info?.(
          { id: entry.id, route: entry.route, from: entry.state },
          'ledger reconciler released an entry',
        );
      } else round.skipped += 1;
      return;
    }
    let held: LedgerEntry | undefined;
    let from: LedgerState = entry.state;
    if (entry.state === 'settling') {
      const done = resolution(
        entry,
        'settling',
        'abandoned',
        `owner ${entry.owner} stopped renewing its lease`,
      );
      held = await ledger.takeOver(entry, owner, { state: 'uncertain', resolution: done });
      if (held) {
        round.abandoned += 1;
        report(entry, done);
      }
    } else {
      from = entry.resolution?.from ?? 'uncertain';
      held = await ledger.takeOver(entry, owner);
    }
    if (!held) {
      round.skipped += 1;
      return;
    }
    await judge(held, from, round);
  }

  async function round(): Promise<ReconcileRound> {
    const result = emptyRound();
    const at = now();
    const found = await ledger.query({ state: RESOLVABLE, leaseUntilBefore: at, limit: batch });
    if (firstRound) {
      // This instance's entries from before it started: their process is gone, whatever the lease says.
      const own = await ledger.query({ state: RESOLVABLE, limit: batch });
      for (const entry of own) {
        if (ledger.isOwnInstance(entry) && entry.updatedAt < startedAt && !ledger.leases.holds(entry))
          found.push(entry);
      }
      firstRound = false;
    }
    const seen = new Set<string>();
    for (const entry of found) {
      if (seen.has(entry.id) || ledger.leases.holds(entry)) continue;
      seen.add(entry.id);
      try {
        await resolve(entry, result);
      } catch (error) {
        result.skipped += 1;
        logger?.warn({ err: error, id: entry.id }, 'ledger reconciler could not resolve an entry');
      }
    }
    return result;
  }

  function runOnce(): Promise<ReconcileRound> {
    running ??= round()
      .then(
        (result) => {
          for (const key of Object.keys(result) as Array<keyof ReconcileRound>) totals[key] += result[key];
          totals.rounds += 1;
          totals.lastRoundAt = now();
          delete totals.lastError;
          return result;
        },
        (error: unknown) => {
          totals.lastError = error instanceof Error ? error.message : String(error);
          throw error;
        },
      )
      .finally(() => {
        running = undefined;
      });
    return running;
  }

  return {
    start() {
      if (timer || options.intervalMs <= 0) return;
      timer = setInterval(() => {
        runOnce().catch((error: unknown) => logger?.warn({ err: error }, 'ledger reconciler round failed'));
      }, options.intervalMs);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
    runOnce,
    stats: () => ({ ...totals }),
  };
}
