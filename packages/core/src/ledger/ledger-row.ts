import type { LedgerEntry, LedgerState } from './types';

/**
 * A ledger entry as one flat SQL row: the shape the SQLite and Postgres stores share. JSON fields
 * are JSON text, the response body raw bytes, times epoch milliseconds (Postgres returns its
 * `bigint` columns as strings, hence `number | string`).
 */
export interface LedgerRow {
  id: string;
  state: LedgerState;
  resource: string;
  route: string;
  network: string;
  payer: string | null;
  payload: string | null;
  requirements: string | null;
  valid_before: number | string;
  transaction_hash: string | null;
  receipt: string | null;
  response_status: number | null;
  response_headers: string | null;
  response_body: Uint8Array | null;
  error: string | null;
  resolution: string | null;
  owner: string;
  lease_until: number | string;
  created_at: number | string;
  updated_at: number | string;
  expires_at: number | string;
}

export type LedgerColumn = keyof LedgerRow;
export type LedgerColumnValue = string | number | Buffer;

/** Columns holding JSON text (Postgres casts them to `jsonb`). */
export const LEDGER_JSON_COLUMNS: ReadonlySet<LedgerColumn> = new Set([
  'payload',
  'requirements',
  'receipt',
  'response_headers',
  'error',
  'resolution',
]);

/** Columns and values for the fields of an entry or a patch; `undefined` fields are left out. */
export function toLedgerColumns(fields: Partial<LedgerEntry>): Array<[LedgerColumn, LedgerColumnValue]> {
  const columns: Array<[LedgerColumn, LedgerColumnValue]> = [];
  const put = (column: LedgerColumn, value: LedgerColumnValue | undefined) => {
    if (value !== undefined) columns.push([column, value]);
  };
  const json = (value: unknown) => (value === undefined ? undefined : JSON.stringify(value));
  put('id', fields.id);
  put('state', fields.state);
  put('resource', fields.resource);
  put('route', fields.route);
  put('network', fields.network);
  put('payer', fields.payer);
  put('payload', json(fields.payload));
  put('requirements', json(fields.requirements));
  put('valid_before', fields.validBefore);
  put('transaction_hash', fields.transaction);
  put('receipt', json(fields.receipt));
  if (fields.response !== undefined) {
    const { status, headers, body } = fields.response;
    put('response_status', status);
    put('response_headers', JSON.stringify(headers));
    put('response_body', Buffer.from(body.buffer, body.byteOffset, body.byteLength));
  }
  put('error', json(fields.error));
  put('resolution', json(fields.resolution));
  put('owner', fields.owner);
  put('lease_until', fields.leaseUntil);
  put('created_at', fields.createdAt);
  put('updated_at', fields.updatedAt);
  put('expires_at', fields.expiresAt);
  return columns;
}

/** The entry a row stores. */
export function fromLedgerRow(row: LedgerRow): LedgerEntry {
  const entry: LedgerEntry = {
    id: row.id,
    state: row.state,
    resource: row.resource,
    route: row.route,
    network: row.network,
    payload: row.payload === null ? undefined : JSON.parse(row.payload),
    requirements: row.requirements === null ? undefined : JSON.parse(row.requirements),
    validBefore: Number(row.valid_before),
    owner: row.owner,
    leaseUntil: Number(row.lease_until),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    expiresAt: Number(row.expires_at),
  };
  if (row.payer !== null) entry.payer = row.payer;
  if (row.transaction_hash !== null) entry.transaction = row.transaction_hash;
  if (row.receipt !== null) entry.receipt = JSON.parse(row.receipt);
  if (row.response_status !== null) {
    entry.response = {
      status: row.response_status,
      headers: JSON.parse(row.response_headers ?? '{}'),
      body: row.response_body === null ? new Uint8Array(0) : new Uint8Array(row.response_body),
    };
  }
  if (row.error !== null) entry.error = JSON.parse(row.error);
  // `?? null`: a row read from a table made before the column existed.
  if ((row.resolution ?? null) !== null) entry.resolution = JSON.parse(row.resolution!);
  return entry;
}
