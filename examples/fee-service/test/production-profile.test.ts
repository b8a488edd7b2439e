// docs/production.md, run as written against the devnet instead of Base: the service in the
// production profile as its own process, a PostgreSQL ledger, the rate limit in Redis, the
// external facilitator `tollbooth-facilitator` (its own process, its own key), RPC_URL as the
// chain reader, a separate upstream, and the official x402 client paying. If the guide's
// variables stop working, this test fails.
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { Redis } from 'ioredis';
import pg from 'pg';
import { erc20Abi } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';

const root = join(import.meta.dirname, '..', '..', '..');
const workspace = join(import.meta.dirname, '..');
const SOURCE = ['--conditions=tollbooth-source', '--import', 'tsx'];
const POSTGRES = 'postgres://postgres@127.0.0.1:5432';
const database = `tollbooth_production_${process.pid}`;
const prefix = `production-test:${process.pid}:rl:`;

let devnet: Devnet;
let upstream: MempoolSimulator;
const children: ChildProcess[] = [];

/** Spawns a process and resolves with it once a stdout line matches `ready` (rejects if it exits). */
function spawnUntil(
  args: string[],
  options: { cwd: string; env: Record<string, string> },
  ready: (line: string) => boolean,
): Promise<{ child: ChildProcess; lines: string[]; line: string; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [...SOURCE, ...args], {
    cwd: options.cwd,
    env: { PATH: process.env['PATH'] ?? '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const lines: string[] = [];
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const parts = buffered.split('\n');
      buffered = parts.pop()!;
      for (const line of parts) {
        lines.push(line);
        if (ready(line)) resolve({ child, lines, line, exited });
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.once('exit', (code) =>
      reject(new Error(`exited ${code} before ready: ${stderr}${lines.join('\n')}`)),
    );
  });
}

beforeAll(async () => {
  // The guide's rehearsal network, Base Sepolia: the devnet puts its token at the real USDC address.
  [devnet, upstream] = await Promise.all([
    startDevnet({ chainId: 84532, payers: 1 }),
    startMempoolSimulator({ seed: 21 }),
  ]);
  const admin = new pg.Client({ connectionString: `${POSTGRES}/test` });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${database}`);
  await admin.query(`CREATE DATABASE ${database}`);
  await admin.end();
}, 180_000);

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await Promise.all([devnet?.stop(), upstream?.close()]);
  const admin = new pg.Client({ connectionString: `${POSTGRES}/test` });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.end();
  const redis = new Redis('redis://127.0.0.1:6379');
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

describe('the production profile of docs/production.md', () => {
  it('serves and settles through PostgreSQL, Redis, tollbooth-facilitator and RPC_URL, paid by @x402/fetch, and stops gracefully', async () => {
    // Step 2 of the guide: the facilitator, its own process and key (it pays the gas).
    const facilitator = await spawnUntil(
      ['packages/facilitator/src/cli.ts', '--rpc-url', devnet.rpcUrl, '--chain-id', '84532', '--port', '0'],
      { cwd: root, env: { TOLLBOOTH_FACILITATOR_KEY: devnet.accounts.facilitator.privateKey } },
      (line) => line.startsWith('tollbooth-facilitator: http'),
    );
    const facilitatorUrl = /(http:\/\/\S+)/.exec(facilitator.line)![1]!;

    // Steps 3–7: the service's environment as the guide lists it (the proxy's part aside).
    const payTo = devnet.accounts.payTo.address;
    const service = await spawnUntil(
      ['src/main.ts'],
      {
        cwd: workspace,
        env: {
          PROFILE: 'production',
          PORT: '0',
          HOST: '127.0.0.1',
          TRUST_PROXY: 'true',
          NETWORK: 'eip155:84532',
          PAY_TO: payTo,
          FACILITATOR_URL: facilitatorUrl,
          FACILITATOR_NAME: 'tollbooth',
          RPC_URL: devnet.rpcUrl,
          INSTANCE_ID: 'fees-1',
          MEMPOOL_URL: upstream.url,
          LEDGER_URL: `${POSTGRES}/${database}`,
          RATE_LIMIT_REDIS_URL: 'redis://127.0.0.1:6379',
          RATE_LIMIT_PREFIX: prefix,
          // The metrics on a listener of their own, off the public port.
          METRICS_PORT: '0',
          OBSERVATORY_ENABLED: 'false',
          LOG_LEVEL: 'info',
        },
      },
      (line) => line.includes('"msg":"fee service listening"'),
    );
    const listening = JSON.parse(service.line) as {
      url: string;
      network: string;
      payTo: string;
      paused: string[];
      metrics: string;
    };
    expect(listening).toMatchObject({ network: 'eip155:84532', payTo });
    // The production profile sells the catalog; the decision is paused.
    expect(listening.paused.some((key) => key.endsWith('/api/v1/fees/now'))).toBe(true);
    const base = listening.url;

    const ready = await fetch(`${base}/readyz`);
    expect(ready.status, await ready.clone().text()).toBe(200);
    expect((await fetch(`${base}/api/v1/fees/now`)).status).toBe(503);

    const balance = () =>
      devnet.publicClient.readContract({
        address: devnet.token.address,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [payTo],
      });
    const before = await balance();
    const payer = privateKeyToAccount(devnet.accounts.payers[0]!.privateKey);
    const pay = wrapFetchWithPayment(fetch, new x402Client().register('eip155:*', new ExactEvmScheme(payer)));
    const paid = await pay(`${base}/api/v1/mining/nextblock`);
    expect(paid.status, await paid.clone().text()).toBe(200);
    const receipt = JSON.parse(
      Buffer.from(paid.headers.get('payment-response')!, 'base64').toString('utf8'),
    ) as {
      success: boolean;
      transaction: `0x${string}`;
      network: string;
    };
    expect(receipt).toMatchObject({ success: true, network: 'eip155:84532' });
    const onChain = await devnet.publicClient.getTransactionReceipt({ hash: receipt.transaction });
    expect(onChain.status).toBe('success');
    expect((await balance()) - before).toBe(10_000n);

    // The ledger row is in PostgreSQL, the rate-limit counters in Redis under the prefix.
    const db = new pg.Client({ connectionString: `${POSTGRES}/${database}` });
    await db.connect();
    const tables = await db.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'",
    );
    const ledgerTable = tables.rows
      .map((row) => row.table_name)
      .find((name) => !name.endsWith('_identifiers') && /ledger/.test(name));
    expect(ledgerTable).toBeDefined();
    const rows = await db.query(`SELECT * FROM ${ledgerTable}`);
    await db.end();
    expect(JSON.stringify(rows.rows)).toContain(receipt.transaction);
    const redis = new Redis('redis://127.0.0.1:6379');
    const counters = await redis.keys(`${prefix}*`);
    await redis.quit();
    expect(counters.length).toBeGreaterThan(0);

    expect((await fetch(`${base}/metrics`)).status).toBe(404);
    const metrics = await (await fetch(listening.metrics)).text();
    expect(metrics).toMatch(/fee_service_payments_total\{route="[^"]*nextblock[^"]*",outcome="settled"\} 1/);

    // Graceful shutdown: SIGTERM, exit 0, the last line says it stopped.
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    expect(service.lines.some((line) => line.includes('"msg":"fee service stopped"'))).toBe(true);
    facilitator.child.kill('SIGTERM');
    expect(await facilitator.exited).toBe(0);
  }, 600_000);
});

describe('the production profile on the embedded simulator', () => {
  const simulated = `tollbooth_production_sim_${process.pid}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: `${POSTGRES}/test` });
    await client.connect();
    await client.query(sql).finally(() => client.end());
  };
  afterAll(() => admin(`DROP DATABASE IF EXISTS ${simulated} WITH (FORCE)`));

  it('keeps the simulated observatory history in memory, never in the configured PostgreSQL', async () => {
    await admin(`DROP DATABASE IF EXISTS ${simulated}`);
    await admin(`CREATE DATABASE ${simulated}`);
    const observatoryTables = async () => {
      const db = new pg.Client({ connectionString: `${POSTGRES}/${simulated}` });
      await db.connect();
      try {
        const { rows } = await db.query<{ table_name: string }>(
          "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
        );
        const names = rows.map((row) => row.table_name);
        const blocks = names.includes('observatory_blocks')
          ? Number((await db.query('SELECT count(*) AS n FROM observatory_blocks')).rows[0].n)
          : 0;
        return { names, blocks };
      } finally {
        await db.end();
      }
    };
    // No MEMPOOL_URL, ESPLORA_URL or CORE_RPC_URL: the simulator serves, two hours of history.
    const serve = (profile: string) =>
      spawnUntil(
        ['src/main.ts'],
        {
          cwd: workspace,
          env: {
            PROFILE: profile,
            PORT: '0',
            LEDGER_URL: `${POSTGRES}/${simulated}`,
            SIMULATOR_HISTORY_HOURS: '2',
            LOG_LEVEL: 'info',
          },
        },
        (line) => line.includes('"msg":"fee service listening"'),
      );

    const production = await serve('production');
    const logged = production.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const base = String(logged.find((entry) => entry['msg'] === 'fee service listening')!['url']);
    // The history was run and is served (from memory): the observatory's resources are for sale.
    expect((await fetch(`${base}/api/v1/fees/observatory/block-stats`)).status).toBe(402);
    const during = await observatoryTables();
    production.child.kill('SIGTERM');
    expect(await production.exited).toBe(0);
    // The ledger is in the configured database; not one simulated block or table of them is.
    expect(during.names.some((name) => /ledger/.test(name))).toBe(true);
    expect(during.names.filter((name) => name.startsWith('observatory'))).toEqual([]);
    expect(await observatoryTables()).toEqual(during);
    const run = logged.find(
      (entry) => entry['msg'] === 'observatory history recorded from the simulated chain',
    );
    expect(Number(run?.['blocks'])).toBeGreaterThan(0);
    expect(logged.find((entry) => entry['code'] === 'simulated_upstream')).toMatchObject({
      level: 40,
      msg: expect.stringContaining('kept in memory, never in LEDGER_URL'),
    });

    // The local profile on the same database does record there (what the production run did not).
    const local = await serve('local');
    expect((await observatoryTables()).blocks).toBeGreaterThan(0);
    local.child.kill('SIGTERM');
    expect(await local.exited).toBe(0);
  }, 300_000);
});
