import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
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

  it('rejects operations after close', async () => {
    const store = createSqliteLedgerStore({ filename: ':memory:' });
    await store.close();
    await expect(store.get('x')).rejects.toMatchObject({ code: 'ledger_unavailable' });
  });
});
