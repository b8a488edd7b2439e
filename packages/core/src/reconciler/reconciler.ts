import {
  abandonSettling,
  dropAbandonedClaim,
  isSettling,
  isUnspent,
  recordVerdict,
  takeOverUncertain,
} from '../ledger/lifecycle';
import type { LedgerEntry, LedgerResolution, LedgerState } from '../ledger/types';
import { askChain, questionFor } from './ask-chain';
import {
  emptyRound,
  LEDGER_RECONCILER_DEFAULTS,
  type LedgerReconciler,
  type LedgerReconcilerOptions,
  RESOLVABLE,
  type ReconcileRound,
  type ReconcilerStats,
} from './reconciler-types';
import { reconcilerResolution, verdictOf } from './reconciler-verdict';

export * from './reconciler-types';
export { receiptHeaderOf } from './reconciler-verdict';

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

  const resolver = () => ({ instance: ledger.instanceId, at: now() });

  function report(entry: LedgerEntry, done: LedgerResolution) {
    // A money event (a payer may be charged): at warn, so an operator sees every one.
    logger?.warn(
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
    const { patch, done, receipt } = verdictOf(resolver(), entry, from, answer, backoff);
    const recorded = await recordVerdict(ledger, { id: entry.id, owner }, patch);
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
    if (isUnspent(entry)) {
      // Nothing was spent: verify passed at most. A retry claims it afresh.
      if (await dropAbandonedClaim(ledger, entry)) {
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
    if (isSettling(entry)) {
      const note = `owner ${entry.owner} stopped renewing its lease`;
      const done = reconcilerResolution(resolver(), entry, entry.state, 'abandoned', note);
      held = await abandonSettling(ledger, entry, owner, done);
      if (held) {
        round.abandoned += 1;
        report(entry, done);
      }
    } else {
      from = entry.resolution?.from ?? 'uncertain';
      held = await takeOverUncertain(ledger, entry, owner);
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
