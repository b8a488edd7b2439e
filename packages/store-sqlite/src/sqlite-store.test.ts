import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteLedgerStore } from './sqlite-store';

describe('createSqliteLedgerStore', () => {
  it('reports every invalid option at once', () => {
    expect(() => createSqliteLedgerStore({ tableName: 'x; DROP TABLE y', purgeIntervalMs: -5 })).toThrow(
      /exactly one of filename and database.*tableName.*purgeIntervalMs/,
    );
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
    // happened (at most 5,000).
    const child = `
      import { createInterface } from 'node:readline';
      import { createSqliteLedgerStore } from '@tollbooth/store-sqlite';
      const [filename, name] = process.argv.slice(1);
      const store = createSqliteLedgerStore({ filename, purgeIntervalMs: 0 });
      await store.get('warm-up');
      const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
      process.stdout.write('ready\\n');
      await lines.next();
      const won = { claims: [], updates: [], attempted: 0, interleaved: false };
      let lostBefore = false;
      const now = Date.now();
      for (let i = 0; i < 5000 && (i < 200 || !won.interleaved); i += 1) {
        const id = 'id-' + i;
        const entry = { id, state: 'claimed', resource: 'r', route: 'GET /r', network: 'n', payload: {},
          requirements: {}, validBefore: 1, owner: name, leaseUntil: now, createdAt: now, updatedAt: now,
          expiresAt: now + 60000 };
        const acquired = (await store.claim(entry)).acquired;
        if (acquired) won.claims.push(id);
        if (acquired && lostBefore) won.interleaved = true;
        lostBefore = !acquired;
        if (await store.update(id, { state: ['claimed'] }, { state: 'settling', owner: name })) won.updates.push(id);
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
