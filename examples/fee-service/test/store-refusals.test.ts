// The stores the configuration names, at start and after: a ledger, a rate-limit Redis or an
// observatory history that cannot be reached stops `npm start` like a configuration error (one
// line per store naming its variable, exit 2, no stack); a Redis that goes away later is one
// warning per outage in the log, never ioredis' "Unhandled error event" on stderr at each
// reconnect. Real processes of the service, the real PostgreSQL and Redis, real closed ports.
import type { ChildProcess } from 'node:child_process';
import { connect, createServer, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { startMain } from './support/main-process';

const children: ChildProcess[] = [];
const POSTGRES = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const probe = new pg.Client({ connectionString: POSTGRES, connectionTimeoutMillis: 3_000 });
const postgresUp = await probe.connect().then(
  () => true,
  () => false,
);
await probe.end().catch(() => {});

/** `npm start` with a throwaway in-memory ledger unless `env` names one. */
const start = (env: Record<string, string>) => startMain({ LEDGER_URL: 'sqlite::memory:', ...env }, children);

/** A loopback port nothing listens on (it was free a moment ago). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

describe('npm start refuses stores it cannot reach', () => {
  it('prints one line per store naming its variable, exit 2, no stack and no ioredis noise', async () => {
    const [ledger, redis, history] = await Promise.all([closedPort(), closedPort(), closedPort()]);
    const run = start({
      LEDGER_URL: `postgres://fees:s3cret@127.0.0.1:${ledger}/fees`,
      RATE_LIMIT_REDIS_URL: `redis://127.0.0.1:${redis}`,
      HISTORY_URL: `postgres://fees@127.0.0.1:${history}/history`,
    });
    expect(await run.exited, run.out.stderr).toBe(2);
    expect(run.out.stderr.trim().split('\n')).toEqual([
      `HISTORY_URL: cannot open the observatory history at postgres://fees@127.0.0.1:${history}/history: connect ECONNREFUSED 127.0.0.1:${history}`,
      `LEDGER_URL: cannot open the PostgreSQL ledger at postgres://fees:***@127.0.0.1:${ledger}/fees: connect ECONNREFUSED 127.0.0.1:${ledger}`,
      `RATE_LIMIT_REDIS_URL: cannot reach the rate limit's Redis at redis://127.0.0.1:${redis}: connect ECONNREFUSED 127.0.0.1:${redis}`,
    ]);
    expect(run.out.stdout).not.toContain('fee service listening');
  }, 120_000);

  it('names LEDGER_URL once for a Redis ledger that does not answer', async () => {
    const port = await closedPort();
    const run = start({ LEDGER_URL: `redis://127.0.0.1:${port}`, OBSERVATORY_ENABLED: 'false' });
    expect(await run.exited, run.out.stderr).toBe(2);
    expect(run.out.stderr).toBe(
      `LEDGER_URL: cannot open the Redis ledger at redis://127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}\n`,
    );
  }, 120_000);

  it.runIf(postgresUp || process.env.CI)(
    'refuses a PostgreSQL ledger whose database does not exist in one line, the history in it included',
    async () => {
      const url = new URL(POSTGRES);
      url.pathname = `/tollbooth_missing_${process.pid}`;
      const run = start({ LEDGER_URL: url.toString() });
      expect(await run.exited, run.out.stderr).toBe(2);
      expect(run.out.stderr).toBe(
        `LEDGER_URL: cannot open the PostgreSQL ledger at ${url}: database "tollbooth_missing_${process.pid}" does not exist\n`,
      );
    },
    120_000,
  );
});

describe('a rate-limit Redis that goes away after start', () => {
  let proxy: Server;
  const sockets = new Set<Socket>();
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => proxy?.close(() => resolve()));
  });

  it('is one warning in the log per outage, and nothing on stderr', async () => {
    // A TCP proxy in front of the real Redis that, once `down`, resets every connection at once.
    const target = new URL(REDIS);
    let down = false;
    let refused = 0;
    proxy = createServer((client) => {
      if (down) {
        refused += 1;
        client.resetAndDestroy();
        return;
      }
      const server = connect(Number(target.port || 6379), target.hostname);
      sockets.add(client).add(server);
      client.pipe(server).pipe(client);
      const end = () => {
        client.destroy();
        server.destroy();
      };
      client.on('error', end).on('close', end);
      server.on('error', end).on('close', end);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const { port } = proxy.address() as { port: number };
    const run = start({
      RATE_LIMIT_REDIS_URL: `redis://127.0.0.1:${port}`,
      RATE_LIMIT_PREFIX: `store-refusals:${process.pid}:`,
      OBSERVATORY_ENABLED: 'false',
    });
    await expect
      .poll(() => run.logs().some((entry) => entry['msg'] === 'fee service listening'), { timeout: 90_000 })
      .toBe(true);
    down = true;
    for (const socket of sockets) socket.resetAndDestroy();
    // Several reconnects, each reset.
    await expect.poll(() => refused, { timeout: 20_000 }).toBeGreaterThanOrEqual(4);
    const warnings = run
      .logs()
      .filter((entry) => entry['msg'] === 'rate-limit Redis connection failed; reconnecting');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 40, code: 'rate_limit_store_unavailable' });
    expect(run.out.stderr).toBe('');
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  }, 150_000);
});
