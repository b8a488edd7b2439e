import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteLedgerStore, SQLITE_LEDGER_STORE_DEFAULTS } from './sqlite-store';

describe('createSqliteLedgerStore', () => {
  it('reports every invalid option at once', () => {
    expect(() => createSqliteLedgerStore({ tableName: 'x; DROP TABLE y', purgeIntervalMs: -5 })).toThrow(
      /exactly one of filename and database.*tableName.*purgeIntervalMs/,
    );
  });

  it('creates its table with indexes in a database it is given and leaves that database open', async () => {
    const db = new Database(':memory:');
    const store = createSqliteLedgerStore({ database: db, purgeIntervalMs: 0 });
    await store.close();
    const names = db
      .prepare<[string], { name: string }>('SELECT name FROM sqlite_master WHERE tbl_name = ? ORDER BY name')
      .all(SQLITE_LEDGER_STORE_DEFAULTS.tableName)
      .map((r) => r.name);
    expect(names).toContain(SQLITE_LEDGER_STORE_DEFAULTS.tableName);
    expect(names).toEqual(
      expect.arrayContaining(['tollbooth_ledger_state_idx', 'tollbooth_ledger_expires_idx']),
    );
    expect(db.open).toBe(true);
    db.close();
  });

  it('adds the resolution column to a table made before it existed, keeping its entries', async () => {
    const db = new Database(':memory:');
    db.exec(`CREATE TABLE old_ledger (
      id TEXT PRIMARY KEY NOT NULL, state TEXT NOT NULL, resource TEXT NOT NULL, route TEXT NOT NULL,
      network TEXT NOT NULL, payer TEXT, payload TEXT, requirements TEXT, valid_before INTEGER NOT NULL,
      transaction_hash TEXT, receipt TEXT, response_status INTEGER, response_headers TEXT,
      response_body BLOB, error TEXT, owner TEXT NOT NULL, lease_until INTEGER NOT NULL,
      created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, expires_at INTEGER NOT NULL)`);
    db.exec(`INSERT INTO old_ledger VALUES ('old', 'uncertain', 'r', 'GET /r', 'n', NULL, '{}', '{}', 1,
      NULL, NULL, NULL, NULL, NULL, NULL, 'a:1', 0, 1, 1, 9999999999999)`);
    const store = createSqliteLedgerStore({ database: db, tableName: 'old_ledger', purgeIntervalMs: 0 });
    expect((await store.get('old'))?.resolution).toBeUndefined();
    const resolution = {
      by: 'reconciler' as const,
      instance: 'b',
      at: 2,
      from: 'uncertain' as const,
      action: 'unresolved' as const,
      attempts: 1,
    };
    expect(
      (await store.update('old', { state: ['uncertain'] }, { state: 'uncertain', resolution }))?.resolution,
    ).toEqual(resolution);
    await store.close();
    db.close();
  });

  it('rejects operations after close', async () => {
    const store = createSqliteLedgerStore({ filename: ':memory:' });
    await store.close();
    await expect(store.get('x')).rejects.toMatchObject({ code: 'ledger_unavailable' });
  });

  describe('shared by several processes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tollbooth-sqlite-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    // Each process claims the same ids, then tries to move each one from claimed to settling.
    const child = `
      import { createSqliteLedgerStore } from '@tollbooth/store-sqlite';
      const [filename, name, start] = process.argv.slice(1);
      const store = createSqliteLedgerStore({ filename, purgeIntervalMs: 0 });
      // Start together, so the processes really contend for the file.
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, Number(start) - Date.now())));
      const won = { claims: [], updates: [] };
      const now = Date.now();
      for (let i = 0; i < 200; i += 1) {
        const id = 'id-' + i;
        const entry = { id, state: 'claimed', resource: 'r', route: 'GET /r', network: 'n', payload: {},
          requirements: {}, validBefore: 1, owner: name, leaseUntil: now, createdAt: now, updatedAt: now,
          expiresAt: now + 60000 };
        if ((await store.claim(entry)).acquired) won.claims.push(id);
        if (await store.update(id, { state: ['claimed'] }, { state: 'settling', owner: name })) won.updates.push(id);
      }
      await store.close();
      process.stdout.write(JSON.stringify(won));
    `;

    it('lets exactly one process win each claim and each state change on one file', async () => {
      const filename = join(dir, 'ledger.db');
      await createSqliteLedgerStore({ filename, purgeIntervalMs: 0 }).close();
      const start = String(Date.now() + 2_500);
      const run = promisify(execFile);
      const outputs = await Promise.all(
        ['p1', 'p2', 'p3'].map((name) =>
          run(
            process.execPath,
            [
              '--conditions=tollbooth-source',
              '--import',
              'tsx',
              '--input-type=module',
              '-e',
              child,
              filename,
              name,
              start,
            ],
            { cwd: process.cwd() },
          ),
        ),
      );
      const won = outputs.map((o) => JSON.parse(o.stdout) as { claims: string[]; updates: string[] });
      const claims = won.flatMap((w) => w.claims).sort();
      const updates = won.flatMap((w) => w.updates).sort();
      const ids = Array.from({ length: 200 }, (_, i) => `id-${i}`).sort();
      expect(claims).toEqual(ids);
      expect(updates).toEqual(ids);
    });
  });
});
