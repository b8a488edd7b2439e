import type { AccessGrant } from './access-types';

/**
 * An access grant as one flat SQL row, the shape the SQLite and Postgres stores share: times epoch
 * milliseconds (Postgres returns `bigint` columns as strings, hence `number | string`).
 */
export interface AccessRow {
  payment: string;
  route: string;
  network: string;
  payer: string;
  amount: string;
  asset: string;
  transaction_hash: string | null;
  granted_at: number | string;
  valid_until: number | string | null;
  uses: number | string | null;
  used: number | string;
  last_used_at: number | string | null;
  expires_at: number | string | null;
}

/** The columns of an access row, in the order `toAccessValues` gives their values. */
export const ACCESS_COLUMNS = [
  'payment',
  'route',
  'network',
  'payer',
  'amount',
  'asset',
  'transaction_hash',
  'granted_at',
  'valid_until',
  'uses',
  'used',
  'last_used_at',
  'expires_at',
] as const satisfies ReadonlyArray<keyof AccessRow>;

/** A grant's values in `ACCESS_COLUMNS` order; absent fields are SQL NULL. */
export function toAccessValues(grant: AccessGrant): Array<string | number | null> {
  return [
    grant.payment,
    grant.route,
    grant.network,
    grant.payer,
    grant.amount,
    grant.asset,
    grant.transaction ?? null,
    grant.grantedAt,
    grant.validUntil ?? null,
    grant.uses ?? null,
    grant.used,
    grant.lastUsedAt ?? null,
    grant.expiresAt ?? null,
  ];
}

/** The grant a row holds; NULL columns are absent fields. */
export function fromAccessRow(row: AccessRow): AccessGrant {
  const grant: AccessGrant = {
    payment: row.payment,
    route: row.route,
    network: row.network,
    payer: row.payer,
    amount: row.amount,
    asset: row.asset,
    grantedAt: Number(row.granted_at),
    used: Number(row.used),
  };
  if (row.transaction_hash !== null) grant.transaction = row.transaction_hash;
  if (row.valid_until !== null) grant.validUntil = Number(row.valid_until);
  if (row.uses !== null) grant.uses = Number(row.uses);
  if (row.last_used_at !== null) grant.lastUsedAt = Number(row.last_used_at);
  if (row.expires_at !== null) grant.expiresAt = Number(row.expires_at);
  return grant;
}
