// The PostgreSQL ledger store's tables: their migration, the columns read back, and the rows of
// identifier bindings.
import type { IdentifierBinding } from '@tollbooth/core';
import { LEDGER_JSON_COLUMNS, type LedgerColumn } from '@tollbooth/core/ledger';
import type pg from 'pg';

// JSON columns are read back as text: `pg` would turn both SQL NULL and a JSON `null` into `null`.
export const COLUMNS = `id, state, resource, route, network, payer, payload::text AS payload,
  requirements::text AS requirements, valid_before, transaction_hash, receipt::text AS receipt,
  response_status, response_headers::text AS response_headers, response_body, error::text AS error,
  resolution::text AS resolution, owner, lease_until, created_at, updated_at, expires_at`;

/**
 * Entries no purge deletes, whatever their `expires_at` (docs/ledger.md#purging): a settled one
 * without its answer, and one whose charge the reconciler has yet to resolve.
 */
export const KEPT_PAST_EXPIRY =
  "(state IN ('settling', 'uncertain') OR (state = 'settled' AND response_status IS NULL))";

/** `$n`, cast to jsonb for JSON columns (the value is always sent as JSON text). */
export const param = (column: string, n: number) =>
  LEDGER_JSON_COLUMNS.has(column as LedgerColumn) ? `$${n}::jsonb` : `$${n}`;

/** Creates the schema, the ledger and identifier tables and their indexes, when missing. */
export function migration(schema: string, table: string): string {
  const t = `"${schema}"."${table}"`;
  return `
    CREATE SCHEMA IF NOT EXISTS "${schema}";
    CREATE TABLE IF NOT EXISTS ${t} (
      id               text PRIMARY KEY,
      state            text NOT NULL,
      resource         text NOT NULL,
      route            text NOT NULL,
      network          text NOT NULL,
      payer            text,
      payload          jsonb,
      requirements     jsonb,
      valid_before     bigint NOT NULL,
      transaction_hash text,
      receipt          jsonb,
      response_status  integer,
      response_headers jsonb,
      response_body    bytea,
      error            jsonb,
      resolution       jsonb,
      owner            text NOT NULL,
      lease_until      bigint NOT NULL,
      created_at       bigint NOT NULL,
      updated_at       bigint NOT NULL,
      expires_at       bigint NOT NULL
    );
    CREATE INDEX IF NOT EXISTS "${table}_state_idx" ON ${t} (state, created_at);
    CREATE INDEX IF NOT EXISTS "${table}_transaction_idx" ON ${t} (transaction_hash) WHERE transaction_hash IS NOT NULL;
    CREATE INDEX IF NOT EXISTS "${table}_payer_idx" ON ${t} (payer, created_at) WHERE payer IS NOT NULL;
    CREATE INDEX IF NOT EXISTS "${table}_created_idx" ON ${t} (created_at);
    CREATE INDEX IF NOT EXISTS "${table}_expires_idx" ON ${t} (expires_at);
    CREATE TABLE IF NOT EXISTS "${schema}"."${table}_identifiers" (
      key         text PRIMARY KEY,
      fingerprint text NOT NULL,
      entry       text NOT NULL,
      version     integer NOT NULL DEFAULT 1,
      created_at  bigint NOT NULL,
      expires_at  bigint NOT NULL
    );
    CREATE INDEX IF NOT EXISTS "${table}_ids_expires_idx" ON "${schema}"."${table}_identifiers" (expires_at);
  `;
}

/** Columns added after the tables were first released: `[table suffix, column, definition]`. */
const ADDED_COLUMNS: ReadonlyArray<readonly [string, string, string]> = [
  ['', 'resolution', 'jsonb'],
  ['_identifiers', 'version', 'integer NOT NULL DEFAULT 1'],
];

/**
 * Adds the columns a table made by an earlier version lacks. Only those: `ALTER TABLE` locks its
 * table against every reader, and an instance starting while others bind identifiers (which read
 * the ledger table) would otherwise deadlock with them at each start.
 */
export async function addMissingColumns(client: pg.ClientBase, schema: string, table: string): Promise<void> {
  const { rows } = await client.query<{ table_name: string; column_name: string }>(
    'SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = ANY($2)',
    [schema, ADDED_COLUMNS.map(([suffix]) => `${table}${suffix}`)],
  );
  const present = new Set(rows.map((row) => `${row.table_name}.${row.column_name}`));
  for (const [suffix, column, definition] of ADDED_COLUMNS) {
    if (present.has(`${table}${suffix}.${column}`)) continue;
    await client.query(
      `ALTER TABLE "${schema}"."${table}${suffix}" ADD COLUMN IF NOT EXISTS ${column} ${definition}`,
    );
  }
}

export interface IdentifierRow {
  key: string;
  fingerprint: string;
  entry: string;
  version: number;
  created_at: string | number;
  expires_at: string | number;
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
