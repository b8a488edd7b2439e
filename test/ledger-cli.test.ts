// tollbooth-ledger against real ledgers: a SQLite file filled by real paid requests on the devnet
// (one settled, one uncertain) plus entries written through the store, and a Redis ledger filled
// through the store. Most runs go through runLedgerCli; a few spawn the real command.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { decodeHeaderJson, type LedgerEntry, type LedgerStore } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { createLedgerInspector, LEDGER_CLI_EXIT, runLedgerCli } from '@tollbooth/ledger-cli';
import { createRedisLedgerStore } from '@tollbooth/store-redis';
import { createSqliteLedgerStore } from '@tollbooth/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLedgerApp, listenLedgerApp } from './support/ledger-app';
import {
  deleteRedisPrefix,
  describeWithService,
  getRaw,
  ledgerAppConfig,
  newRedisPrefix,
  paymentHeader,
  REDIS_URL,
  redisLedgerUrl,
  redisProblem,
} from './support/ledger-harness';

const run = promisify(execFile);
const repoRoot = join(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'tollbooth-ledger-cli-'));
const dbPath = join(dir, 'ledger.db');
const sqliteUrl = `sqlite:${dbPath}`;
const redisPrefix = newRedisPrefix();
const rProblem = await redisProblem();

let devnet: Devnet;
let settled: LedgerEntry;
let uncertain: LedgerEntry;

/** Runs the CLI in-process; returns exit code and output. */
async function cli(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runLedgerCli(argv, {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
    env: {},
  });
  return { code, stdout, stderr };
}

/** An entry written straight through a store (states the gate passes through quickly). */
function entry(id: string, state: LedgerEntry['state'], payer: string, createdAt: number): LedgerEntry {
  return {
    id,
    state,
    resource: 'http://ledger.tollbooth.test/paid',
    route: 'GET /paid',
    network: 'eip155:8453',
    payer,
    payload: { x402Version: 2 },
    requirements: { maxTimeoutSeconds: 60 },
    validBefore: Math.floor(createdAt / 1000) + 60,
    owner: 'ops:1',
    leaseUntil: createdAt + 60_000,
    createdAt,
    updatedAt: createdAt,
    expiresAt: createdAt + 86_400_000,
  };
}

beforeAll(async () => {
  devnet = await startDevnet({ payers: 2 });
  const store = createSqliteLedgerStore({ filename: dbPath });
  try {
    const { app } = createLedgerApp(
      ledgerAppConfig(devnet, { instanceId: 'cli', receiptTimeoutMs: 400 }),
      store,
    );
    const server = await listenLedgerApp(app);
    try {
      const [p0, p1] = devnet.accounts.payers;
      expect(
        (
          await getRaw(`${server.url}/paid`, {
            'payment-signature': await paymentHeader(`${server.url}/paid`, p0!.privateKey),
          })
        ).status,
      ).toBe(200);
      const pendingHeader = await paymentHeader(`${server.url}/paid`, p1!.privateKey);
      await devnet.setAutomine(false);
      try {
        expect((await getRaw(`${server.url}/paid`, { 'payment-signature': pendingHeader })).status).toBe(502);
      } finally {
        await devnet.setAutomine(true);
      }
      settled = (await store.query({ state: 'settled' }))[0]!;
      uncertain = (await store.query({ state: 'uncertain' }))[0]!;
    } finally {
      await server.close();
    }
    // A rejected and a claimed entry, older than the paid ones.
    const t = settled!.createdAt - 10_000;
    await store.claim({
      ...entry('exact:test:rejected', 'rejected', '0xRejectedPayer', t),
      error: { code: 'payment_settlement_failed', message: 'refused' },
    });
    await store.claim(entry('exact:test:claimed', 'claimed', '0xClaimedPayer', t + 1));
  } finally {
    await store.close();
  }
  expect(settled).toBeDefined();
  expect(uncertain).toBeDefined();
});
afterAll(async () => {
  await devnet?.stop();
  rmSync(dir, { recursive: true, force: true });
  if (rProblem === undefined) await deleteRedisPrefix(redisPrefix);
});

describe('tollbooth-ledger on a SQLite ledger written by real payments', () => {
  it('lists every entry newest first as a table', async () => {
    const { code, stdout } = await cli('list', '--ledger', sqliteUrl);
    expect(code).toBe(LEDGER_CLI_EXIT.ok);
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^CREATED\s+STATE\s+ROUTE\s+PAYER\s+TRANSACTION\s+ERROR\s+RESOLVED\s+ID$/);
    expect(lines.slice(1, 5).map((l) => l.split(/\s+/)[1])).toEqual([
      'uncertain',
      'settled',
      'claimed',
      'rejected',
    ]);
    expect(lines.at(-1)).toBe('4 entries');
    expect(stdout).toContain(settled.id);
    expect(stdout).toContain(settled.payer!);
  });

  it('lists the uncertain entries, and with --check exits 1 when there are any', async () => {
    const table = await cli('uncertain', '-l', sqliteUrl);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain(uncertain.id);
    expect(table.stdout).not.toContain(settled.id);
    expect(table.stdout).toContain('settlement_uncertain');
    expect(table.stdout.trim().split('\n').at(-1)).toBe('1 entry');
    expect((await cli('uncertain', '-l', sqliteUrl, '--check')).code).toBe(LEDGER_CLI_EXIT.notFound);

    const json = await cli('uncertain', '-l', sqliteUrl, '--json');
    const [only, ...more] = JSON.parse(json.stdout) as Array<Record<string, unknown>>;
    expect(more).toHaveLength(0);
    expect(only).toMatchObject({ id: uncertain.id, state: 'uncertain', transaction: uncertain.transaction });
  });

  it('filters by state, payer, transaction and limit', async () => {
    const ids = async (...args: string[]) =>
      (JSON.parse((await cli('list', '-l', sqliteUrl, '--json', ...args)).stdout) as LedgerEntry[]).map(
        (e) => e.id,
      );
    expect(await ids('--state', 'settled')).toEqual([settled.id]);
    expect(await ids('--state', 'settled', '--state', 'rejected')).toEqual([
      settled.id,
      'exact:test:rejected',
    ]);
    expect(await ids('--payer', settled.payer!)).toEqual([settled.id]);
    expect(await ids('--tx', settled.transaction!)).toEqual([settled.id]);
    expect(await ids('--limit', '2')).toEqual([uncertain.id, settled.id]);
    expect(await ids('--payer', '0xNobody')).toEqual([]);
    expect((await cli('list', '-l', sqliteUrl, '--payer', '0xNobody')).stdout.trim()).toBe('no entries');
  });

  it('shows one entry with its stored response, as text and as JSON', async () => {
    const text = await cli('show', settled.id, '-l', sqliteUrl);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^id\\s+${settled.id}$`, 'm'));
    expect(text.stdout).toMatch(/^state\s+settled$/m);
    expect(text.stdout).toMatch(new RegExp(`^transaction\\s+${settled.transaction}$`, 'm'));
    expect(text.stdout).toMatch(/^response: 200, \d+ bytes$/m);
    const header = /payment-response: (\S+)$/m.exec(text.stdout)?.[1];
    expect(decodeHeaderJson(header ?? '')).toMatchObject({ success: true, transaction: settled.transaction });
    expect(text.stdout).toContain('"paid":true');

    const json = JSON.parse((await cli('show', settled.id, '-l', sqliteUrl, '--json')).stdout);
    expect(json).toMatchObject({ id: settled.id, state: 'settled', receipt: { success: true } });
    expect(Buffer.from(json.response.bodyBase64, 'base64').equals(Buffer.from(settled.response!.body))).toBe(
      true,
    );
    expect(JSON.parse(json.response.bodyText)).toMatchObject({ paid: true, instance: 'cli' });
  });

  it('prints the signed payment payload only when asked with --with-payload (a replay of it gets the stored answer)', async () => {
    const signature = (settled.payload as { payload: { signature: string } }).payload.signature;
    expect(signature).toMatch(/^0x[0-9a-f]{130}$/);
    const outputs = [
      await cli('show', settled.id, '-l', sqliteUrl),
      await cli('show', settled.id, '-l', sqliteUrl, '--json'),
      await cli('list', '-l', sqliteUrl, '--json'),
      await cli('uncertain', '-l', sqliteUrl, '--json'),
    ];
    for (const { code, stdout } of outputs) {
      expect(code).toBe(0);
      expect(stdout).not.toContain(signature);
      expect(stdout).not.toContain('"payload"');
    }
    const json = JSON.parse(
      (await cli('show', settled.id, '-l', sqliteUrl, '--json', '--with-payload')).stdout,
    );
    expect(json.payload).toEqual(settled.payload);
    const listed = JSON.parse(
      (await cli('list', '-l', sqliteUrl, '--json', '--with-payload')).stdout,
    ) as Array<{
      id: string;
      payload: unknown;
    }>;
    expect(listed.find((e) => e.id === settled.id)?.payload).toEqual(settled.payload);
    const text = await cli('show', settled.id, '-l', sqliteUrl, '--with-payload');
    expect(text.stdout).toContain(signature);
    expect(text.stdout).toContain('payload (signed; a replay of it gets the stored answer):');
  });

  it('exits 1 for an unknown id', async () => {
    const { code, stderr } = await cli('show', 'exact:nope', '-l', sqliteUrl);
    expect(code).toBe(LEDGER_CLI_EXIT.notFound);
    expect(stderr).toContain('no entry with id exact:nope');
  });

  it('counts entries by state', async () => {
    const text = await cli('stats', '-l', sqliteUrl);
    expect(text.stdout).toMatch(/^settled\s+1$/m);
    expect(text.stdout).toMatch(/^uncertain\s+1$/m);
    expect(text.stdout).toMatch(/^total\s+4$/m);
    expect(JSON.parse((await cli('stats', '-l', sqliteUrl, '--json')).stdout)).toEqual({
      claimed: 1,
      verified: 0,
      settling: 0,
      settled: 1,
      rejected: 1,
      uncertain: 1,
      total: 4,
    });
  });

  it('agrees with the inspector facade', async () => {
    const store: LedgerStore = createSqliteLedgerStore({ filename: dbPath, purgeIntervalMs: 0 });
    try {
      const inspector = createLedgerInspector(store);
      expect((await inspector.uncertain()).map((e) => e.id)).toEqual([uncertain.id]);
      expect((await inspector.byTransaction(settled.transaction!)).map((e) => e.id)).toEqual([settled.id]);
      expect((await inspector.byPayer(settled.payer!)).map((e) => e.id)).toEqual([settled.id]);
      expect((await inspector.byState(['claimed', 'rejected'])).map((e) => e.id)).toEqual([
        'exact:test:claimed',
        'exact:test:rejected',
      ]);
      expect(await inspector.byId(settled.id)).toMatchObject({ state: 'settled' });
      expect((await inspector.stats()).total).toBe(4);
      await expect(inspector.byState('lost' as never)).rejects.toThrow(/unknown ledger state "lost"/);
    } finally {
      await store.close();
    }
  });

  it.each([
    [['list'], /no ledger given/],
    [['frobnicate', '-l', 'x.db'], /unknown command "frobnicate"/],
    [[], /no command given/],
    [['list', '--state', 'lost', '-l', 'x.db'], /unknown state "lost"/],
    [['list', '--limit', '-3', '-l', 'x.db'], /--limit must be a non-negative integer|argument/],
    [['list', '--bogus'], /Unknown option '--bogus'/],
    [['show', '-l', 'x.db'], /show takes exactly one entry id/],
    [['stats', '--payer', '0x1', '-l', 'x.db'], /--payer only applies to list/],
    [['stats', '-l', 'mysql://db/x'], /unsupported ledger URL scheme "mysql:"/],
    [['stats', '-l', join(dir, 'missing.db')], /no SQLite ledger at .*missing\.db/],
    [
      ['list', '--with-payload', '-l', 'x.db'],
      /--with-payload applies to show, and to list and uncertain with --json/,
    ],
    [['stats', '--json', '--with-payload', '-l', 'x.db'], /--with-payload applies to show/],
  ])('exits 2 with a clear message for %j', async (argv, message) => {
    const { code, stderr, stdout } = await cli(...argv);
    expect(code).toBe(LEDGER_CLI_EXIT.usage);
    expect(stderr).toMatch(message);
    expect(stdout).toBe('');
  });

  it('exits 3 when the ledger server does not answer', async () => {
    const { code, stderr } = await cli('stats', '-l', 'redis://127.0.0.1:1');
    expect(code).toBe(LEDGER_CLI_EXIT.unavailable);
    expect(stderr).toMatch(/Redis at redis:\/\/127\.0\.0\.1:1 did not answer/);
  });

  it.each([
    [
      'redis://app:s3cret-user-info@127.0.0.1:1/0?password=s3cret-query',
      /redis:\/\/app:\*\*\*@127\.0\.0\.1:1\/0\?password=\*\*\*/,
    ],
    [
      'postgres://app:s3cret-user-info@127.0.0.1:1/db?sslpassword=s3cret-query&schema=x',
      /postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/db\?sslpassword=\*\*\*/,
    ],
  ])('never prints the credentials of %s (user-info and query string)', async (url, shown) => {
    const { code, stderr, stdout } = await cli('stats', '-l', url);
    expect(code).toBe(LEDGER_CLI_EXIT.unavailable);
    expect(stderr).toMatch(shown);
    expect(`${stdout}${stderr}`).not.toMatch(/s3cret/);
  });

  it('never prints the credentials of a URL it cannot parse', async () => {
    const { code, stderr } = await cli('stats', '-l', 'redis://app:s3cret@[bad/?password=s3cret2');
    expect(code).toBe(LEDGER_CLI_EXIT.usage);
    expect(stderr).toContain('not a valid URL');
    expect(stderr).not.toMatch(/s3cret/);
  });

  it('reads the ledger URL from LEDGER_URL, as the fee service does, when TOLLBOOTH_LEDGER_URL is unset', async () => {
    const read = async (env: Record<string, string>) => {
      let stdout = '';
      let stderr = '';
      const code = await runLedgerCli(['stats', '--json'], {
        stdout: (t) => {
          stdout += t;
        },
        stderr: (t) => {
          stderr += t;
        },
        env,
      });
      return { code, stdout, stderr };
    };
    const viaService = await read({ LEDGER_URL: sqliteUrl });
    expect(viaService).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(viaService.stdout)).toMatchObject({ uncertain: 1 });
    // The tool's own variable wins over the service's.
    const both = await read({ TOLLBOOTH_LEDGER_URL: 'redis://127.0.0.1:1', LEDGER_URL: sqliteUrl });
    expect(both.code).toBe(LEDGER_CLI_EXIT.unavailable);
    expect((await read({})).stderr).toContain('set TOLLBOOTH_LEDGER_URL (or LEDGER_URL)');
  });

  it('runs as a command, reading the ledger URL from TOLLBOOTH_LEDGER_URL', async () => {
    const args = ['--conditions=tollbooth-source', '--import', 'tsx', 'packages/ledger-cli/src/cli.ts'];
    const ok = await run(process.execPath, [...args, 'uncertain', '--json'], {
      cwd: repoRoot,
      env: { ...process.env, TOLLBOOTH_LEDGER_URL: sqliteUrl },
    });
    expect((JSON.parse(ok.stdout) as LedgerEntry[]).map((e) => e.id)).toEqual([uncertain.id]);
    const help = await run(process.execPath, [...args, '--help'], { cwd: repoRoot });
    expect(help.stdout).toMatch(/^Usage: tollbooth-ledger <command>/);
    const bad = await run(process.execPath, [...args, 'stats', '-l', 'mysql://x'], { cwd: repoRoot }).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringContaining('unsupported ledger URL scheme') });
  });
});

describeWithService('tollbooth-ledger on a Redis ledger', rProblem, () => {
  it('lists, shows and counts entries under a key prefix', async () => {
    const store = createRedisLedgerStore({ redis: REDIS_URL, keyPrefix: redisPrefix, purgeIntervalMs: 0 });
    const now = Date.now();
    try {
      await store.claim(entry('exact:redis:one', 'claimed', '0xA', now - 2));
      await store.claim(entry('exact:redis:two', 'claimed', '0xB', now - 1));
      await store.update(
        'exact:redis:two',
        { state: ['claimed'] },
        { state: 'uncertain', transaction: `0x${'ab'.repeat(32)}` },
      );
    } finally {
      await store.close();
    }
    const url = redisLedgerUrl(redisPrefix);
    const uncertainJson = JSON.parse((await cli('uncertain', '-l', url, '--json')).stdout) as LedgerEntry[];
    expect(uncertainJson.map((e) => e.id)).toEqual(['exact:redis:two']);
    expect((await cli('list', '-l', url, '--tx', `0x${'ab'.repeat(32)}`, '--json')).stdout).toContain(
      'exact:redis:two',
    );
    const show = await cli('show', 'exact:redis:one', '-l', url);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/^payer\s+0xA$/m);
    expect(JSON.parse((await cli('stats', '-l', url, '--json')).stdout)).toMatchObject({
      claimed: 1,
      uncertain: 1,
      total: 2,
    });
    // Another prefix is another ledger.
    expect(
      JSON.parse((await cli('stats', '-l', redisLedgerUrl(`${redisPrefix}other:`), '--json')).stdout),
    ).toMatchObject({ total: 0 });
  });
});
