import { describe, expect, it } from 'vitest';
import { fromLedgerRow, LEDGER_JSON_COLUMNS, type LedgerRow, toLedgerColumns } from './ledger-row';
import type { LedgerEntry } from './types';

function fullEntry(): LedgerEntry {
  return {
    id: 'eip155:8453:0xasset:0xpayer:0x01',
    state: 'settled',
    resource: 'https://api.example/paid',
    route: 'GET /paid',
    network: 'eip155:8453',
    payer: '0xpayer',
    payload: { signature: '0xsig' },
    requirements: { scheme: 'exact', amount: '1000' },
    validBefore: 1_700_000_600,
    transaction: '0xtx',
    receipt: { success: true, transaction: '0xtx' },
    response: { status: 200, headers: { 'content-type': 'text/plain' }, body: new Uint8Array([0, 255, 7]) },
    error: { code: 'settlement_pending', message: 'pending' },
    resolution: {
      by: 'retry',
      instance: 'inst-a',
      at: 1_700_000_000_500,
      from: 'uncertain',
      action: 'confirmed-on-chain',
      attempts: 2,
      note: 'Transfer found',
    },
    owner: 'inst-a:req-1',
    leaseUntil: 1_700_000_009_000,
    createdAt: 1_700_000_000_000,
    updatedAt: 1_700_000_000_100,
    expiresAt: 1_700_086_400_000,
  };
}

function fullRow(): LedgerRow {
  return {
    id: 'eip155:8453:0xasset:0xpayer:0x01',
    state: 'settled',
    resource: 'https://api.example/paid',
    route: 'GET /paid',
    network: 'eip155:8453',
    payer: '0xpayer',
    payload: '{"signature":"0xsig"}',
    requirements: '{"scheme":"exact","amount":"1000"}',
    valid_before: '1700000600',
    transaction_hash: '0xtx',
    receipt: '{"success":true,"transaction":"0xtx"}',
    response_status: 200,
    response_headers: '{"content-type":"text/plain"}',
    response_body: Buffer.from([0, 255, 7]),
    error: '{"code":"settlement_pending","message":"pending"}',
    resolution:
      '{"by":"retry","instance":"inst-a","at":1700000000500,"from":"uncertain","action":"confirmed-on-chain","attempts":2,"note":"Transfer found"}',
    owner: 'inst-a:req-1',
    lease_until: '1700000009000',
    created_at: 1_700_000_000_000,
    updated_at: '1700000000100',
    expires_at: '1700086400000',
  };
}

describe('toLedgerColumns', () => {
  it('gives every field of an entry its column, JSON as text and the body as bytes', () => {
    const columns = toLedgerColumns(fullEntry());
    expect(columns.map(([column]) => column)).toStrictEqual([
      'id',
      'state',
      'resource',
      'route',
      'network',
      'payer',
      'payload',
      'requirements',
      'valid_before',
      'transaction_hash',
      'receipt',
      'response_status',
      'response_headers',
      'response_body',
      'error',
      'resolution',
      'owner',
      'lease_until',
      'created_at',
      'updated_at',
      'expires_at',
    ]);
    const row = Object.fromEntries(columns);
    expect(row).toMatchObject({
      id: 'eip155:8453:0xasset:0xpayer:0x01',
      state: 'settled',
      resource: 'https://api.example/paid',
      route: 'GET /paid',
      network: 'eip155:8453',
      payer: '0xpayer',
      payload: '{"signature":"0xsig"}',
      requirements: '{"scheme":"exact","amount":"1000"}',
      valid_before: 1_700_000_600,
      transaction_hash: '0xtx',
      receipt: '{"success":true,"transaction":"0xtx"}',
      response_status: 200,
      response_headers: '{"content-type":"text/plain"}',
      error: '{"code":"settlement_pending","message":"pending"}',
      owner: 'inst-a:req-1',
      lease_until: 1_700_000_009_000,
      created_at: 1_700_000_000_000,
      updated_at: 1_700_000_000_100,
      expires_at: 1_700_086_400_000,
    });
    expect(JSON.parse(row.resolution as string)).toStrictEqual(fullEntry().resolution);
    expect(Buffer.isBuffer(row.response_body)).toBe(true);
    expect([...(row.response_body as Buffer)]).toStrictEqual([0, 255, 7]);
  });

  it('takes only the bytes of a body that is a view into a larger buffer', () => {
    const backing = new Uint8Array([9, 9, 1, 2, 3, 9]);
    const columns = toLedgerColumns({
      response: { status: 200, headers: {}, body: backing.subarray(2, 5) },
    });
    const body = columns.find(([column]) => column === 'response_body')?.[1] as Buffer;
    expect([...body]).toStrictEqual([1, 2, 3]);
  });

  it('leaves out the fields a patch does not set, and keeps a JSON null', () => {
    expect(toLedgerColumns({ state: 'uncertain', leaseUntil: 0 })).toStrictEqual([
      ['state', 'uncertain'],
      ['lease_until', 0],
    ]);
    expect(toLedgerColumns({ payload: null, requirements: undefined })).toStrictEqual([['payload', 'null']]);
    expect(toLedgerColumns({})).toStrictEqual([]);
  });

  it('marks the JSON columns', () => {
    expect([...LEDGER_JSON_COLUMNS].sort()).toStrictEqual(
      ['error', 'payload', 'receipt', 'requirements', 'resolution', 'response_headers'].sort(),
    );
  });
});

describe('fromLedgerRow', () => {
  it('reads every column back into the entry, numbers from bigint strings', () => {
    const entry = fromLedgerRow(fullRow());
    expect(entry).toStrictEqual({
      ...fullEntry(),
      response: { ...fullEntry().response, body: expect.anything() },
    });
    expect(entry.response?.body).toBeInstanceOf(Uint8Array);
    expect(Buffer.isBuffer(entry.response?.body)).toBe(false);
    expect([...entry.response!.body]).toStrictEqual([0, 255, 7]);
  });

  it('leaves absent what a row holds as NULL', () => {
    const row: LedgerRow = {
      ...fullRow(),
      payer: null,
      payload: null,
      requirements: null,
      transaction_hash: null,
      receipt: null,
      response_status: null,
      response_headers: null,
      response_body: null,
      error: null,
      resolution: null,
    };
    const entry = fromLedgerRow(row);
    expect(Object.keys(entry).sort()).toStrictEqual(
      [
        'id',
        'state',
        'resource',
        'route',
        'network',
        'payload',
        'requirements',
        'validBefore',
        'owner',
        'leaseUntil',
        'createdAt',
        'updatedAt',
        'expiresAt',
      ].sort(),
    );
    expect(entry.payload).toBeUndefined();
    expect(entry.requirements).toBeUndefined();
  });

  it('reads a response without headers or body as empty ones', () => {
    const entry = fromLedgerRow({
      ...fullRow(),
      response_status: 204,
      response_headers: null,
      response_body: null,
    });
    expect(entry.response).toStrictEqual({ status: 204, headers: {}, body: new Uint8Array(0) });
  });

  it('reads a row from a table made before the resolution column existed', () => {
    const { resolution: _dropped, ...old } = fullRow();
    const entry = fromLedgerRow(old as LedgerRow);
    expect('resolution' in entry).toBe(false);
  });

  it('gives back what toLedgerColumns wrote', () => {
    const entry = fullEntry();
    const row = Object.fromEntries(toLedgerColumns(entry)) as unknown as LedgerRow;
    const back = fromLedgerRow(row);
    expect({ ...back, response: { ...back.response, body: [...back.response!.body] } }).toStrictEqual({
      ...entry,
      response: { ...entry.response, body: [0, 255, 7] },
    });
  });
});
