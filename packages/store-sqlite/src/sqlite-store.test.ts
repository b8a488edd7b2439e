import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { LedgerEntry } from '@tollbooth/core';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createSqliteLedgerStore, type SqliteLedgerStoreOptions } from './sqlite-store';

const TABLE_RULE = '/^[A-Za-z_][A-Za-z0-9_]{0,62}$/';

function buildEntry(overrides: Partial<LedgerEntry> = {}): LedgerEntry {
  const now = Date.now();
  return {
    id: 'entry',
    state: 'claimed',
    resource: 'r',
    route: 'GET /r',
    network: 'n',
    payload: {},
    requirements: {},
    validBefore: 1,
    owner: 'o',
    leaseUntil: now,
    createdAt: now,
    updatedAt: now,
    expiresAt: now + 60_000,
    ...overrides,
  };
}

/** The message of the invalid_config error the options are refused with. */
function refusal(options: unknown): string {
  try {
    createSqliteLedgerStore(options as SqliteLedgerStoreOptions);
  } catch (error) {
    expect(error).toMatchObject({ code: 'invalid_config' });
    return (error as Error).message;
  }
  throw new Error('the options were accepted');
}

describe('createSqliteLedgerStore', () => {
  const given = new Database(':memory:');
  const files = mkdtempSync(join(tmpdir(), 'tollbooth-sqlite-options-'));
  afterAll(() => {
    given.close();
    rmSync(files, { recursive: true, force: true });
  });

  it('reports every invalid option at once', () => {
    expect(() => createSqliteLedgerStore({ tableName: 'x; DROP TABLE y', purgeIntervalMs: -5 })).toThrow(
      /exactly one of filename and database.*tableName.*purgeIntervalMs/,
    );
  });

  it('lists the problems in one sentence, separated by semicolons', () => {
    expect(refusal({ tableName: '1x', busyTimeoutMs: -1, purgeIntervalMs: 0.5 })).toBe(
      'Invalid SQLite ledger store options: give exactly one of filename and database; ' +
        `tableName must match ${TABLE_RULE} (got 1x); busyTimeoutMs must be a non-negative integer (got -1); ` +
        'purgeIntervalMs must be a non-negative integer (got 0.5)',
    );
  });

  it.each([
    ['neither filename nor database', {}, 'give exactly one of filename and database'],
    [
      'both filename and database',
      { filename: 'x.db', database: given },
      'give exactly one of filename and database',
    ],
    ['an empty filename', { filename: '' }, 'filename must be a non-empty string'],
    ['a filename that is no string', { filename: 5 }, 'filename must be a non-empty string'],
    [
      'a tableName with a space',
      { database: given, tableName: 'my table' },
      `tableName must match ${TABLE_RULE} (got my table)`,
    ],
    [
      'a tableName of 64 characters',
      { database: given, tableName: 'a'.repeat(64) },
      `tableName must match ${TABLE_RULE} (got ${'a'.repeat(64)})`,
    ],
    [
      'a tableName that is no string, even one that reads as a name',
      { database: given, tableName: ['ledger'] },
      `tableName must match ${TABLE_RULE} (got ledger)`,
    ],
    [
      'a negative busyTimeoutMs',
      { database: given, busyTimeoutMs: -1 },
      'busyTimeoutMs must be a non-negative integer (got -1)',
    ],
    [
      'a fractional busyTimeoutMs',
      { database: given, busyTimeoutMs: 1.5 },
      'busyTimeoutMs must be a non-negative integer (got 1.5)',
    ],
    [
      'a busyTimeoutMs that is a string',
      { database: given, busyTimeoutMs: '10' },
      'busyTimeoutMs must be a non-negative integer (got 10)',
    ],
    [
      'a negative purgeIntervalMs',
      { database: given, purgeIntervalMs: -1 },
      'purgeIntervalMs must be a non-negative integer (got -1)',
    ],
    [
      'a purgeIntervalMs of NaN',
      { database: given, purgeIntervalMs: Number.NaN },
      'purgeIntervalMs must be a non-negative integer (got NaN)',
    ],
  ])('refuses %s', (_label, options, problem) => {
    expect(refusal(options)).toBe(`Invalid SQLite ledger store options: ${problem}`);
  });

  it('takes a table name of 63 characters, one starting with _, and 0 for both timings', async () => {
    for (const tableName of ['a'.repeat(63), '_ledger_2']) {
      const store = createSqliteLedgerStore({
        database: given,
        tableName,
        busyTimeoutMs: 0,
        purgeIntervalMs: 0,
      });
      await store.claim(buildEntry({ id: tableName }));
      await store.close();
      expect(given.prepare(`SELECT id FROM ${tableName}`).all()).toEqual([{ id: tableName }]);
    }
  });

  it('takes options given as undefined as their defaults', async () => {
    const db = new Database(':memory:');
    const store = createSqliteLedgerStore({
      database: db,
      filename: undefined,
      tableName: undefined,
      busyTimeoutMs: undefined,
      purgeIntervalMs: undefined,
    });
    await store.claim(buildEntry({ id: 'defaults' }));
    await store.close();
    expect(db.prepare('SELECT id FROM tollbooth_ledger').all()).toEqual([{ id: 'defaults' }]);
    db.close();
  });

  it('opens its own file in WAL mode and closes it on close', async () => {
    const filename = join(files, 'owned.db');
    const store = createSqliteLedgerStore({ filename, purgeIntervalMs: 0 });
    await store.claim(buildEntry({ id: 'owned' }));
    const reader = new Database(filename, { readonly: true });
    expect(reader.pragma('journal_mode', { simple: true })).toBe('wal');
    reader.close();
    expect(existsSync(`${filename}-wal`)).toBe(true);
    await store.close();
    // The last connection closed, SQLite folds the write-ahead log into the file and deletes it.
    expect(existsSync(`${filename}-wal`)).toBe(false);
    const reopened = createSqliteLedgerStore({ filename, purgeIntervalMs: 0 });
    expect((await reopened.get('owned'))?.id).toBe('owned');
    await reopened.close();
  });

  it('leaves the journal mode, busy timeout and synchronous of a database it is given as they were', async () => {
    const db = new Database(join(files, 'given.db'));
    db.pragma('busy_timeout = 1234');
    db.pragma('synchronous = OFF');
    const store = createSqliteLedgerStore({ database: db, busyTimeoutMs: 50, purgeIntervalMs: 0 });
    await store.claim(buildEntry(), { durable: false });
    await store.claim(buildEntry());
    await store.close();
    expect(db.pragma('journal_mode', { simple: true })).toBe('delete');
    expect(db.pragma('busy_timeout', { simple: true })).toBe(1234);
    expect(db.pragma('synchronous', { simple: true })).toBe(0);
    db.close();
  });

  it('counts the bindings it purges along with the entries', async () => {
    const db = new Database(':memory:');
    const store = createSqliteLedgerStore({ database: db, purgeIntervalMs: 0 });
    const now = Date.now();
    await store.claim(buildEntry({ id: 'gone', state: 'rejected', expiresAt: now - 1 }));
    await store.bindIdentifier({
      key: 'k',
      fingerprint: 'f',
      entry: 'gone',
      createdAt: now,
      expiresAt: now - 1,
    });
    await store.bindIdentifier({
      key: 'k2',
      fingerprint: 'f',
      entry: 'other',
      createdAt: now,
      expiresAt: now - 1,
    });
    expect(await store.purgeExpired(now)).toBe(3);
    expect(await store.purgeExpired(now)).toBe(0);
    await store.close();
    db.close();
  });

  describe('purging on its own', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('purges expired entries every purgeIntervalMs, and no more once closed', async () => {
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
      const db = new Database(':memory:');
      const store = createSqliteLedgerStore({ database: db, purgeIntervalMs: 1_000 });
      const reader = createSqliteLedgerStore({ database: db, purgeIntervalMs: 0 });
      await store.claim(buildEntry({ id: 'first', expiresAt: Date.now() + 500 }));
      vi.advanceTimersByTime(999);
      expect(await reader.get('first')).toBeDefined();
      vi.advanceTimersByTime(1);
      expect(await reader.get('first')).toBeUndefined();

      await store.close();
      await reader.claim(buildEntry({ id: 'second', expiresAt: Date.now() - 1 }));
      vi.advanceTimersByTime(10_000);
      expect(await reader.get('second')).toBeDefined();
      await reader.close();
      db.close();
    });

    it('purges nothing on its own with purgeIntervalMs 0', async () => {
      vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'Date'] });
      const db = new Database(':memory:');
      const store = createSqliteLedgerStore({ database: db, purgeIntervalMs: 0 });
      await store.claim(buildEntry({ id: 'expired', expiresAt: Date.now() - 1 }));
      vi.advanceTimersByTime(100);
      expect(await store.get('expired')).toBeDefined();
      await store.close();
      db.close();
    });
  });

  it('writes to tollbooth_ledger with its indexes in a database it is given and leaves that database open', async () => {
    const db = new Database(':memory:');
    const store = createSqliteLedgerStore({ database: db, purgeIntervalMs: 0 });
    const now = Date.now();
    await store.claim({
      id: 'written',
      state: 'claimed',
      resource: 'r',
      route: 'GET /r',
      network: 'n',
      payload: {},
      requirements: {},
      validBefore: 1,
      owner: 'o',
      leaseUntil: now,
      createdAt: now,
      updatedAt: now,
      expiresAt: now + 60_000,
    });
    await store.close();
    const names = db
      .prepare<[], { name: string }>(
        "SELECT name FROM sqlite_master WHERE tbl_name = 'tollbooth_ledger' ORDER BY name",
      )
      .all()
      .map((r) => r.name);
    expect(names).toContain('tollbooth_ledger');
    expect(names).toEqual(
      expect.arrayContaining(['tollbooth_ledger_state_idx', 'tollbooth_ledger_expires_idx']),
    );
    // What the store wrote, read back with SQL rather than through the store.
    expect(db.prepare('SELECT id, state FROM tollbooth_ledger').all()).toEqual([
      { id: 'written', state: 'claimed' },
    ]);
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

  it('adds the version column to an identifier table made before it existed: old bindings are version 1', async () => {
    const db = new Database(':memory:');
    db.exec(`CREATE TABLE old_ids_identifiers (key TEXT PRIMARY KEY NOT NULL, fingerprint TEXT NOT NULL,
      entry TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL)`);
    db.exec(`INSERT INTO old_ids_identifiers VALUES ('k', 'f', 'e', 1, 9999999999999)`);
    const store = createSqliteLedgerStore({ database: db, tableName: 'old_ids', purgeIntervalMs: 0 });
    const old = {
      key: 'k',
      fingerprint: 'f',
      entry: 'e',
      version: 1,
      createdAt: 1,
      expiresAt: 9999999999999,
    };
    expect(await store.getIdentifier('k')).toEqual(old);
    const next = { key: 'k', fingerprint: 'g', entry: 'n', createdAt: 2, expiresAt: 9999999999999 };
    expect(await store.bindIdentifier(next, { entry: 'e', version: 1 })).toEqual({
      bound: true,
      binding: { ...next, version: 2 },
    });
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

    // Each process claims the same ids in turn, then tries to move each one from claimed to
    // settling. They start together on a signal sent once all three have opened the file (not at
    // a time agreed beforehand, which a slow start would miss), and each records whether it ever
    // won an id right after losing the one before: then another process was claiming at the
    // same moment, so the processes really contended. They go on past 200 ids until that
    // happened to one of them, which says so to the others through the file itself (a claim of
    // the id 'contended', looked for every 50 ids): a process that ran alone while the others
    // waited for a CPU keeps going until they catch up, losing is quicker than winning (at most
    // 60 s).
    // The writes are relaxed (synchronous NORMAL, docs/ledger.md#durability): the test is about who
    // wins, and with a disk sync per commit three processes in a tight loop serialize into long runs
    // (SQLite's busy handler is not fair), so they rarely interleave and a loser can wait beyond
    // the 5 s busy timeout; a file reopened before #38 ran every write at NORMAL anyway.
    const child = `
      import { createInterface } from 'node:readline';
      import { createSqliteLedgerStore } from '@tollbooth/store-sqlite';
      const [filename, name] = process.argv.slice(1);
      const store = createSqliteLedgerStore({ filename, purgeIntervalMs: 0 });
      await store.get('warm-up');
      const relaxed = { durable: false };
      const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
      process.stdout.write('ready\\n');
      await lines.next();
      const won = { claims: [], updates: [], attempted: 0, interleaved: false };
      let lostBefore = false;
      const now = Date.now();
      const contended = async () => won.interleaved || (await store.get('contended')) !== undefined;
      for (let i = 0; Date.now() - now < 60000; i += 1) {
        if (i >= 200 && i % 50 === 0 && (await contended())) break;
        const id = 'id-' + i;
        const entry = { id, state: 'claimed', resource: 'r', route: 'GET /r', network: 'n', payload: {},
          requirements: {}, validBefore: 1, owner: name, leaseUntil: now, createdAt: now, updatedAt: now,
          expiresAt: now + 60000 };
        const acquired = (await store.claim(entry, relaxed)).acquired;
        if (acquired) won.claims.push(id);
        if (acquired && lostBefore && !won.interleaved) {
          won.interleaved = true;
          await store.claim({ ...entry, id: 'contended' });
        }
        lostBefore = !acquired;
        if (await store.update(id, { state: ['claimed'] }, { state: 'settling', owner: name }, relaxed)) won.updates.push(id);
        won.attempted = i + 1;
      }
      await store.close();
      process.stdout.write(JSON.stringify(won) + '\\n');
      process.stdin.destroy();
    `;

    /** Starts one child process and gives its output line by line. */
    function startChild(filename: string, name: string) {
      const proc = spawn(
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
        ],
        { cwd: process.cwd(), stdio: ['pipe', 'pipe', 'inherit'] },
      );
      const lines = createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
      const exited = new Promise<number | null>((resolve) => proc.on('exit', resolve));
      const next = async () => {
        const line = await lines.next();
        if (line.done) throw new Error(`${name} exited with ${await exited} before answering`);
        return line.value;
      };
      return { proc, next, exited };
    }

    // A hang guard only: three tsx processes start slowly on a loaded machine.
    it('lets exactly one process win each claim and each state change on one file, while they contend', {
      timeout: 180_000,
    }, async () => {
      const filename = join(dir, 'ledger.db');
      await createSqliteLedgerStore({ filename, purgeIntervalMs: 0 }).close();
      const children = ['p1', 'p2', 'p3'].map((name) => startChild(filename, name));
      try {
        for (const c of children) expect(await c.next()).toBe('ready');
        for (const c of children) c.proc.stdin.write('go\n');
        const won = await Promise.all(
          children.map(
            async (c) =>
              JSON.parse(await c.next()) as {
                claims: string[];
                updates: string[];
                attempted: number;
                interleaved: boolean;
              },
          ),
        );
        // Contention happened: some process won an id right after another process took the one
        // before, and more than one process won claims.
        expect(won.some((w) => w.interleaved)).toBe(true);
        expect(won.filter((w) => w.claims.length > 0).length).toBeGreaterThan(1);
        // Every id any process tried has exactly one winner, of its claim and of its state change.
        const attempted = Math.max(...won.map((w) => w.attempted));
        const ids = Array.from({ length: attempted }, (_, i) => `id-${i}`).sort();
        expect(won.flatMap((w) => w.claims).sort()).toEqual(ids);
        expect(won.flatMap((w) => w.updates).sort()).toEqual(ids);
        for (const c of children) expect(await c.exited).toBe(0);
      } finally {
        for (const c of children) c.proc.kill();
      }
    });
  });
});
