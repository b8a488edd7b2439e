import type { IdentifierBinding } from '@tollbooth/core';

/** A row of the identifier table. */
export interface IdentifierRow {
  key: string;
  fingerprint: string;
  entry: string;
  version: number;
  created_at: number;
  expires_at: number;
}

export function fromIdentifierRow(row: IdentifierRow): IdentifierBinding {
  return {
    key: row.key,
    fingerprint: row.fingerprint,
    entry: row.entry,
    version: Number(row.version),
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
  };
}
