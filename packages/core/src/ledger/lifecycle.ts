// The lifecycle of a payment in the ledger, top to bottom (docs/ledger.md#states):
//
//   claimed → verified → settling → settled | rejected | uncertain
//   claimed ───────────→ settling   (a route that settles before its handler: /settle verifies)
//                                              uncertain → settling (a retry settles it again)
//                                              uncertain → settled | rejected (the chain decides)
//
// Each verb owns the states it moves an entry from and the lease that goes with it: a request
// holds the lease of what it works on (renewed by the lease keeper), lets it go when nobody works
// on the entry any more. The gate and the reconciler call these verbs and never spell a state.
// Every move is a compare-and-set on state and owner: `undefined` when the entry changed first.
import type { StoredResponse } from '../http/types';
import type { SettleResponse } from '../protocol/schemas';
import { RELAXED, type SettlementLedger } from './settlement-ledger';
import type { ClaimResult, LedgerEntry, LedgerPatch, LedgerResolution, LedgerState } from './types';

/** An entry as a request holds it: its id and the owner this request writes as. */
export type Held = Pick<LedgerEntry, 'id' | 'owner'>;

/** A move of a held entry to another state; `to` names that state (for logs). */
export interface Verb<A extends unknown[]> {
  (ledger: SettlementLedger, held: Held, ...args: A): Promise<LedgerEntry | undefined>;
  readonly to: LedgerState;
}

/**
 * Declares a verb: from which states, to which, with what; `hold` renews the lease after the move
 * (someone works on the entry in its new state), `letGo` stops renewing it before (nobody does).
 * `relaxed` says when the move may be lost in a crash at no cost (docs/ledger.md#durability): the
 * store then commits it without waiting for the disk. Every other move is durable.
 */
function verb<A extends unknown[]>(
  from: readonly LedgerState[],
  to: LedgerState,
  patch: (...args: A) => Omit<LedgerPatch, 'state'>,
  lease?: 'hold' | 'letGo',
  relaxed?: (patch: Omit<LedgerPatch, 'state'>) => boolean,
): Verb<A> {
  const move = async (ledger: SettlementLedger, held: Held, ...args: A) => {
    if (lease === 'letGo') await ledger.leases.letGo(held);
    const fields = patch(...args);
    const moved = await ledger.transition(
      held,
      from,
      { state: to, ...fields },
      relaxed?.(fields) ? RELAXED : undefined,
    );
    if (moved && lease === 'hold') ledger.leases.hold(held, to);
    return moved;
  };
  return Object.assign(move, { to });
}

const receiptOf = (receipt: SettleResponse) => ({
  receipt,
  ...(receipt.transaction ? { transaction: receipt.transaction } : {}),
});

// 1. Claim: a new entry (from `ledger.newEntry`), held while this request works on it.

/** Claims a new entry, or gives back the one already there; a claim acquired is held. */
export async function claim(ledger: SettlementLedger, fresh: LedgerEntry): Promise<ClaimResult> {
  const claimed = await ledger.claim(fresh);
  if (claimed.acquired) ledger.leases.hold(fresh, 'claimed');
  return claimed;
}

/** This process works on a held entry until the returned function ends it (and lets its lease go). */
export function startFlight(ledger: SettlementLedger, held: Held): () => void {
  const end = ledger.startFlight(held.id);
  return () => {
    end();
    void ledger.leases.letGo(held);
  };
}

// 2. Verify.

/**
 * claimed → verified: the facilitator found the payment valid. Not durable: no money moved; a
 * crash that loses it leaves a claim, which costs nothing either.
 */
export const markVerified = verb(
  ['claimed'],
  'verified',
  () => ({}),
  undefined,
  () => true,
);

/** claimed | verified → gone: a claim that spent nothing is given back; the payer may pay again. */
export function release(ledger: SettlementLedger, held: Held): Promise<boolean> {
  return ledger.release(held);
}

// 3. Settle: the handler's answer, when it ran already, is stored before the facilitator is asked,
// so a crash loses nothing; the lease is renewed while the facilitator works.

/** verified → settling. */
export const startSettling = verb(
  ['verified'],
  'settling',
  (response?: StoredResponse) => (response ? { response } : {}),
  'hold',
);

/**
 * claimed → settling, unverified: a route that settles before its handler asks the facilitator's
 * `/settle` straight away (it verifies as it settles).
 */
export const startSettlingUnverified = verb(
  ['claimed'],
  'settling',
  (response?: StoredResponse) => (response ? { response } : {}),
  'hold',
);

/**
 * settling → gone: the `/settle` request of an unverified payment provably never reached the
 * facilitator (connection refused, host unresolved), so nothing can have been charged.
 */
export function releaseUnsent(ledger: SettlementLedger, held: Held): Promise<boolean> {
  return ledger.release(held, ['settling']);
}

/** uncertain → settling: a retry of the payer's own payload settles an unsettled payment again. */
export const settleAgain = verb(
  ['uncertain'],
  'settling',
  (response?: StoredResponse) => (response ? { response } : {}),
  'hold',
);

/** What a settlement that landed records: the receipt, the paid answer when the handler ran. */
export interface Settled {
  receipt: SettleResponse;
  response?: StoredResponse | undefined;
  resolution?: LedgerResolution | undefined;
}

const settledPatch = ({ receipt, response, resolution }: Settled) => ({
  ...receiptOf(receipt),
  ...(response ? { response } : {}),
  ...(resolution ? { resolution } : {}),
});

/**
 * settling → settled: the transfer landed (a handler still to run keeps the lease). Durable when
 * it stores the paid answer (the final write of a request); without one (a route that settles
 * before its handler) not: a crash that loses it leaves the durable `settling` entry, which the
 * reconciler settles from the chain, and the handler's answer, stored durably once it ran, is
 * the request's final write.
 */
export const recordSettled = verb(
  ['settling'],
  'settled',
  settledPatch,
  undefined,
  (fields) => fields.response === undefined,
);

/** settling → rejected: the refusal stands; its answer (402) is what a retry gets. */
export const recordRejected = verb(
  ['settling'],
  'rejected',
  (receipt: SettleResponse, response: StoredResponse, error: { code: string; message: string }) => ({
    receipt,
    response,
    error,
  }),
);

/** settling → uncertain: the outcome is not known; free at once for the retry and the reconciler. */
export const recordUncertain = verb(
  ['settling'],
  'uncertain',
  (message: string, transaction?: string) => ({
    error: { code: 'settlement_uncertain', message },
    leaseUntil: 0,
    ...(transaction ? { transaction } : {}),
  }),
  'letGo',
);

// 4. Settled before the handler ran (`settle: 'before-handler'`): the handler's answer comes later.

/** settled → settled: the handler's paid answer, stored for replays. */
export const recordAnswer = verb(['settled'], 'settled', (response: StoredResponse) => ({ response }));

/**
 * settled → settled, free at once: the handler failed or threw after the payment was settled; a
 * retry of the payload runs it again.
 */
export const leaveUnanswered = verb(['settled'], 'settled', () => ({ leaseUntil: 0 }), 'letGo');

/** A settled entry with no answer yet: a retry takes it over and holds it while its handler runs. */
export async function takeOverUnanswered(
  ledger: SettlementLedger,
  found: LedgerEntry,
  owner: string,
): Promise<LedgerEntry | undefined> {
  const owned = await ledger.takeOver(found, owner);
  if (owned) ledger.leases.hold({ id: found.id, owner }, found.state);
  return owned;
}

/** The handler runs on a settled entry this request holds (its lease renewed meanwhile). */
export function holdForHandler(ledger: SettlementLedger, held: Held): void {
  ledger.leases.hold(held, 'settled');
}

// 5. Resolve what a request left unresolved (the retry of a payload; the reconciler).

/**
 * An in-flight entry whose owner stopped renewing its lease: a claim that spent nothing is
 * removed; a settlement it started may have landed, so it becomes uncertain with `resolution`.
 * Whether this call made the change.
 */
export function adoptAbandoned(
  ledger: SettlementLedger,
  found: LedgerEntry,
  resolution: LedgerResolution,
): Promise<boolean> {
  return ledger.adoptAbandoned(found, resolution);
}

/** claimed | verified, its lease ran out: the reconciler removes it (nothing was spent). */
export function dropAbandonedClaim(ledger: SettlementLedger, found: LedgerEntry): Promise<boolean> {
  return ledger.dropClaim(found);
}

/** settling → uncertain, its lease ran out: the reconciler takes it over (its transfer may have landed). */
export function abandonSettling(
  ledger: SettlementLedger,
  found: LedgerEntry,
  owner: string,
  resolution: LedgerResolution,
): Promise<LedgerEntry | undefined> {
  return ledger.takeOver(found, owner, { state: 'uncertain', resolution });
}

/** An uncertain entry: a retry takes it over, whatever its lease says (the reconciler, once free). */
export function takeOverUncertain(
  ledger: SettlementLedger,
  found: LedgerEntry,
  owner: string,
): Promise<LedgerEntry | undefined> {
  return ledger.takeOver(found, owner);
}

/** uncertain → settled: the chain shows the transfer. */
export const recordConfirmed = verb(['uncertain'], 'settled', settledPatch);

/** uncertain → rejected: the authorization expired unused; nothing can be charged any more. */
export const recordExpired = verb(['uncertain'], 'rejected', (resolution: LedgerResolution) => ({
  error: { code: 'payment_expired', message: 'the authorization expired unused' },
  leaseUntil: 0,
  resolution,
}));

/** uncertain → uncertain: the chain cannot tell yet; free for the next retry or round. */
export const leaveUncertain = verb(['uncertain'], 'uncertain', (resolution: LedgerResolution) => ({
  leaseUntil: 0,
  resolution,
}));

/**
 * uncertain → the reconciler's verdict on the chain's answer (`verdictOf` in
 * packages/core/src/reconciler/reconciler-verdict.ts): settled, rejected, or uncertain until its
 * next look.
 */
export function recordVerdict(
  ledger: SettlementLedger,
  held: Held,
  verdict: LedgerPatch,
): Promise<LedgerEntry | undefined> {
  return ledger.transition(held, ['uncertain'], verdict);
}

// What an entry is: the questions the gate asks of one it found.

/** Settled: the payment was charged. */
export const isSettled = (entry: LedgerEntry): boolean => entry.state === 'settled';

/** Settled with its paid answer stored: a replay sends it. */
export const isAnswered = (entry: LedgerEntry): entry is LedgerEntry & { response: StoredResponse } =>
  isSettled(entry) && !!entry.response;

/** Rejected: charged nothing; its refusal is final. */
export const isRejected = (entry: Pick<LedgerEntry, 'state'>): boolean => entry.state === 'rejected';

/** Uncertain: the chain (the retry or the reconciler) decides. */
export const isUncertain = (entry: LedgerEntry): boolean => entry.state === 'uncertain';

/** Claimed or verified: nothing was spent yet. */
export const isUnspent = (entry: LedgerEntry): boolean =>
  entry.state === 'claimed' || entry.state === 'verified';

/** Settling: a settlement was started (abandoned, if its lease ran out). */
export const isSettling = (entry: LedgerEntry): boolean => entry.state === 'settling';
