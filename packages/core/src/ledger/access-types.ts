import type { PaymentIdentity } from '../scheme';

/**
 * Access to a route that a settled payment bought, for a payer who comes back by signing in
 * (sign-in-with-x, docs/sign-in-with-x.md). The gate records it from what it verified itself: the
 * matched route, the payer of the verified payment, the amount, the settled transaction and the
 * route's policy (a time pass, a number of uses, or both) — never from fields the client wrote.
 */
export interface AccessGrant {
  /** The ledger id of the payment that bought the access: one grant per payment. */
  payment: PaymentIdentity;
  /** Route key as declared (method and path), e.g. `GET /api/v1/observatory/estimates`. */
  route: string;
  /** CAIP-2 network of the payment: a sign-in must be made on this network. */
  network: string;
  /** The payer in its network's one spelling (EVM: EIP-55 checksum; other families as given). */
  payer: string;
  /** What was paid: atomic units of `asset`. */
  amount: string;
  asset: string;
  /** The transaction that settled the payment, when known. */
  transaction?: string;
  /** Epoch ms the access began (the payment settled). */
  grantedAt: number;
  /** Epoch ms the pass ends (exclusive); absent when the route's policy has no time pass. */
  validUntil?: number;
  /** Uses the payment bought; absent when the route's policy does not count uses. */
  uses?: number;
  /** Uses taken so far (a use given back after a failed handler is not counted). */
  used: number;
  /** Epoch ms of the last use. */
  lastUsedAt?: number;
  /**
   * Epoch ms after which a purge may delete the grant. Absent while a grant without a time pass
   * still has uses left; set when its last use is taken (`AccessUse.keepUntil`).
   */
  expiresAt?: number;
}

/** One sign-in's request for access: whose, to what, and when. */
export interface AccessUse {
  route: string;
  network: string;
  /** The signer, in the same spelling the grant's payer has. */
  payer: string;
  /** Epoch ms of the request: a grant counts when `validUntil` is after it. */
  at: number;
  /**
   * Epoch ms to keep a grant without a time pass once this use takes its last use (its `expiresAt`),
   * so an operator still sees it for a while.
   */
  keepUntil: number;
}

/** Operators' listing of grants (newest `grantedAt` first). Every field narrows the list. */
export interface AccessQuery {
  payment?: PaymentIdentity;
  payer?: string;
  route?: string;
  /** Default 100. */
  limit?: number;
}

/**
 * The sign-in part of a ledger store: access grants and the one-time claim of a sign-in proof's
 * nonce. Every method is atomic across instances sharing the store. The built-in stores (memory,
 * SQLite, Redis, PostgreSQL) implement it and pass the shared store suite; a route with sign-in
 * needs a store that does.
 */
export interface AccessStore {
  /**
   * Records a grant unless one exists for its payment (a payment buys access once, whoever records
   * it: the paying request, a retry, the reconciler). Returns the stored grant.
   */
  grantAccess(grant: AccessGrant): Promise<AccessGrant>;
  /**
   * Takes one use of a grant of the route, network and payer that is valid at `at` (before its
   * `validUntil`, uses left), atomically: two instances never take the same last use. The grant
   * ending soonest is used first. Returns the grant after the use, or `undefined` when none holds.
   */
  useAccess(use: AccessUse): Promise<AccessGrant | undefined>;
  /**
   * Gives back a use taken by `useAccess` (its handler failed: nothing was served). A grant without
   * a time pass whose last use it was is kept again (`expiresAt` cleared). `false` when the grant is
   * gone or has no use taken.
   */
  returnAccess(payment: PaymentIdentity): Promise<boolean>;
  /**
   * Claims a sign-in nonce, once: `true` for the first caller, `false` for every other one (on any
   * instance) until `expiresAt` (epoch ms) has passed. The gate keeps a claim longer than a proof
   * carrying the nonce can be accepted, so a claim that has passed can never let a proof in again.
   */
  claimNonce(nonce: string, expiresAt: number): Promise<boolean>;
  /** Lists grants for operators, newest first. */
  queryAccess(query: AccessQuery): Promise<AccessGrant[]>;
}

/** Whether a grant lets a request in at `at`: before its pass ends, with a use left. */
export function accessHolds(grant: AccessGrant, at: number): boolean {
  if (grant.validUntil !== undefined && !(at < grant.validUntil)) return false;
  return grant.uses === undefined || grant.used < grant.uses;
}

/**
 * The order in which grants are used: the one whose pass ends soonest, then one with counted uses,
 * then the oldest, then by payment id (the same order in every store).
 */
export function grantUseOrder(a: AccessGrant, b: AccessGrant): number {
  const ends = (g: AccessGrant) => g.validUntil ?? Number.POSITIVE_INFINITY;
  if (ends(a) !== ends(b)) return ends(a) < ends(b) ? -1 : 1;
  const counted = (g: AccessGrant) => (g.uses === undefined ? 1 : 0);
  if (counted(a) !== counted(b)) return counted(a) - counted(b);
  if (a.grantedAt !== b.grantedAt) return a.grantedAt - b.grantedAt;
  return a.payment < b.payment ? -1 : a.payment > b.payment ? 1 : 0;
}
