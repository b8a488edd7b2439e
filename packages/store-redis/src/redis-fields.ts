// How the Redis ledger store keeps entries and identifier bindings in hashes: one field per
// entry field, JSON for the JSON ones, base64 for response bodies, decimal strings for numbers.
import type { IdentifierBinding, LedgerEntry, LedgerState } from '@tollbooth/core';

/** Hash fields of an entry or a patch; `undefined` fields are left out. */
export function encodeFields(fields: Partial<LedgerEntry>): string[] {
  const out: string[] = [];
  const put = (name: string, value: string | undefined) => {
    if (value !== undefined) out.push(name, value);
  };
  const json = (value: unknown) => (value === undefined ? undefined : JSON.stringify(value));
  const num = (value: number | undefined) => (value === undefined ? undefined : String(value));
  put('id', fields.id);
  put('state', fields.state);
  put('resource', fields.resource);
  put('route', fields.route);
  put('network', fields.network);
  put('payer', fields.payer);
  put('payload', json(fields.payload));
  put('requirements', json(fields.requirements));
  put('validBefore', num(fields.validBefore));
  put('transaction', fields.transaction);
  put('receipt', json(fields.receipt));
  if (fields.response !== undefined) {
    const { status, headers, body } = fields.response;
    const base64 = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('base64');
    put('response', JSON.stringify({ status, headers, body: base64 }));
  }
  put('error', json(fields.error));
  put('resolution', json(fields.resolution));
  put('owner', fields.owner);
  put('leaseUntil', num(fields.leaseUntil));
  put('createdAt', num(fields.createdAt));
  put('updatedAt', num(fields.updatedAt));
  put('expiresAt', num(fields.expiresAt));
  return out;
}

/** An entry from its hash fields. */
export function decodeFields(f: Record<string, string>): LedgerEntry {
  const entry: LedgerEntry = {
    id: f.id!,
    state: f.state as LedgerState,
    resource: f.resource!,
    route: f.route!,
    network: f.network!,
    payload: f.payload === undefined ? undefined : JSON.parse(f.payload),
    requirements: f.requirements === undefined ? undefined : JSON.parse(f.requirements),
    validBefore: Number(f.validBefore),
    owner: f.owner!,
    leaseUntil: Number(f.leaseUntil),
    createdAt: Number(f.createdAt),
    updatedAt: Number(f.updatedAt),
    expiresAt: Number(f.expiresAt),
  };
  if (f.payer !== undefined) entry.payer = f.payer;
  if (f.transaction !== undefined) entry.transaction = f.transaction;
  if (f.receipt !== undefined) entry.receipt = JSON.parse(f.receipt);
  if (f.response !== undefined) {
    const { status, headers, body } = JSON.parse(f.response) as {
      status: number;
      headers: Record<string, string>;
      body: string;
    };
    entry.response = { status, headers, body: new Uint8Array(Buffer.from(body, 'base64')) };
  }
  if (f.error !== undefined) entry.error = JSON.parse(f.error);
  if (f.resolution !== undefined) entry.resolution = JSON.parse(f.resolution);
  return entry;
}

/** A hash from the flat `[field, value, …]` list a script returns. */
export function fromFlat(flat: string[]): Record<string, string> {
  const record: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) record[flat[i]!] = flat[i + 1]!;
  return record;
}

/** An identifier binding from its hash fields; `undefined` for an empty hash (no binding). */
export function decodeBinding(fields: Record<string, string>): IdentifierBinding | undefined {
  if (fields.key === undefined) return undefined;
  return {
    key: fields.key,
    fingerprint: fields.fingerprint!,
    entry: fields.entry!,
    // Bindings stored before versions existed count as the first.
    version: fields.version === undefined ? 1 : Number(fields.version),
    createdAt: Number(fields.createdAt),
    expiresAt: Number(fields.expiresAt),
  };
}
