import { TollboothError } from '../../errors/index';
import type { PaymentIdentity } from '../../scheme';
import {
  type AccessGrant,
  type AccessQuery,
  type AccessStore,
  type AccessUse,
  accessHolds,
  grantUseOrder,
} from '../access-types';

/** Default of `AccessQuery.limit`, shared by every store. */
export const ACCESS_QUERY_DEFAULT_LIMIT = 100;

/** The limit of an access listing, checked the way every store checks it. */
export function accessQueryLimit(query: AccessQuery): number {
  const limit = query.limit ?? ACCESS_QUERY_DEFAULT_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 0)
    throw new TollboothError('invalid_config', `limit must be a non-negative integer (got ${limit})`);
  return limit;
}

/** Newest `grantedAt` first, then payment id descending (the listing order of every store). */
export function newerGrantFirst(a: AccessGrant, b: AccessGrant): number {
  if (a.grantedAt !== b.grantedAt) return b.grantedAt - a.grantedAt;
  return a.payment < b.payment ? 1 : a.payment > b.payment ? -1 : 0;
}

/** A grant's subject: who may use it, for what. */
const subjectOf = (g: Pick<AccessGrant, 'route' | 'network' | 'payer'>): string =>
  JSON.stringify([g.route, g.network, g.payer]);

/** The memory store's access grants and nonce claims, with its purge. */
export interface MemoryAccessBook extends AccessStore {
  purge(at: number): number;
  clear(): void;
}

/**
 * Access grants and nonce claims in maps, for the memory ledger store. JavaScript runs each method
 * to its end before another starts, so a check and its write are one atomic step.
 */
export function createMemoryAccessBook(assertOpen: () => void, now: () => number): MemoryAccessBook {
  const grants = new Map<PaymentIdentity, AccessGrant>();
  const bySubject = new Map<string, Set<PaymentIdentity>>();
  const nonces = new Map<string, number>();

  const forget = (grant: AccessGrant): void => {
    grants.delete(grant.payment);
    const subject = subjectOf(grant);
    const ids = bySubject.get(subject);
    ids?.delete(grant.payment);
    if (ids?.size === 0) bySubject.delete(subject);
  };

  return {
    async grantAccess(grant: AccessGrant): Promise<AccessGrant> {
      assertOpen();
      const existing = grants.get(grant.payment);
      if (existing) return { ...existing };
      const stored = Object.fromEntries(
        Object.entries(grant).filter(([, value]) => value !== undefined),
      ) as unknown as AccessGrant;
      grants.set(stored.payment, stored);
      const subject = subjectOf(stored);
      let ids = bySubject.get(subject);
      if (!ids) {
        ids = new Set();
        bySubject.set(subject, ids);
      }
      ids.add(stored.payment);
      return { ...stored };
    },

    async useAccess(use: AccessUse): Promise<AccessGrant | undefined> {
      assertOpen();
      let best: AccessGrant | undefined;
      for (const id of bySubject.get(subjectOf(use)) ?? []) {
        const grant = grants.get(id);
        if (grant && accessHolds(grant, use.at) && (!best || grantUseOrder(grant, best) < 0)) best = grant;
      }
      if (!best) return undefined;
      best.used += 1;
      best.lastUsedAt = use.at;
      if (best.uses !== undefined && best.used >= best.uses && best.expiresAt === undefined)
        best.expiresAt = use.keepUntil;
      return { ...best };
    },

    async returnAccess(payment: PaymentIdentity): Promise<boolean> {
      assertOpen();
      const grant = grants.get(payment);
      if (!grant || grant.used <= 0) return false;
      grant.used -= 1;
      if (grant.validUntil === undefined) delete grant.expiresAt;
      return true;
    },

    async claimNonce(nonce: string, expiresAt: number): Promise<boolean> {
      assertOpen();
      // A claim whose time has passed no longer holds, purged or not (as in every store).
      const held = nonces.get(nonce);
      if (held !== undefined && !(held < now())) return false;
      nonces.set(nonce, expiresAt);
      return true;
    },

    async queryAccess(query: AccessQuery): Promise<AccessGrant[]> {
      assertOpen();
      const limit = accessQueryLimit(query);
      const found: AccessGrant[] = [];
      for (const grant of grants.values()) {
        if (query.payment !== undefined && grant.payment !== query.payment) continue;
        if (query.payer !== undefined && grant.payer !== query.payer) continue;
        if (query.route !== undefined && grant.route !== query.route) continue;
        found.push(grant);
      }
      return found
        .sort(newerGrantFirst)
        .slice(0, limit)
        .map((grant) => ({ ...grant }));
    },

    purge(at: number): number {
      let purged = 0;
      for (const grant of [...grants.values()]) {
        if (grant.expiresAt !== undefined && grant.expiresAt < at) {
          forget(grant);
          purged += 1;
        }
      }
      for (const [nonce, expiresAt] of nonces) {
        if (expiresAt < at) {
          nonces.delete(nonce);
          purged += 1;
        }
      }
      return purged;
    },

    clear(): void {
      grants.clear();
      bySubject.clear();
      nonces.clear();
    },
  };
}
