// Test-side helpers of the ledger durability suites: child servers (tracked by PID, killed in
// afterAll), paying with a real EIP-3009 authorization, counting Transfer logs on the devnet, and
// per-run Redis prefixes / Postgres schemas with the skip-unless-CI rule of the store suite.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeHeaderJson, encodeHeader, type PaymentRequired } from '@tollbooth/core';
import type { Devnet } from '@tollbooth/devnet';
import { createPaymentPayload } from '@tollbooth/evm';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { Address, Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { describe, it } from 'vitest';
import type { LedgerAppConfig } from './ledger-app';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '..', '..');
export const LEDGER_SERVER_SCRIPT = join(here, 'ledger-crash-server.ts');

/** The app config for an instance on this devnet. */
export function ledgerAppConfig(devnet: Devnet, overrides: Partial<LedgerAppConfig> = {}): LedgerAppConfig {
  return {
    rpcUrl: devnet.rpcUrl,
    chainId: devnet.chainId,
    multicall3: devnet.multicall3,
    token: { address: devnet.token.address, name: devnet.token.name, version: devnet.token.version },
    payTo: devnet.accounts.payTo.address,
    facilitatorKey: devnet.accounts.facilitator.privateKey,
    instanceId: 'test',
    ...overrides,
  };
}

export interface ChildServer {
  url: string;
  pid: number;
  child: ChildProcess;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
}

/** Starts and tracks child servers; `killAll` in afterAll kills each by its PID. */
export class ChildServers {
  private readonly children = new Set<ChildServer>();

  async start(config: LedgerAppConfig, ledgerUrl: string, timeoutMs = 30_000): Promise<ChildServer> {
    const child = spawn(
      process.execPath,
      ['--conditions=tollbooth-source', '--import', 'tsx', LEDGER_SERVER_SCRIPT],
      {
        cwd: repoRoot,
        env: { ...process.env, LEDGER_SERVER_CONFIG: JSON.stringify(config), LEDGER_URL: ledgerUrl },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let err = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
    });
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(
        () => reject(new Error(`child server did not start in ${timeoutMs} ms:\n${err}`)),
        timeoutMs,
      );
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const line = /LEDGER_SERVER_READY (.*)\n/.exec(out);
        if (line) {
          clearTimeout(timer);
          resolve((JSON.parse(line[1]!) as { url: string }).url);
        }
      });
      void exited.then(({ code, signal }) => {
        clearTimeout(timer);
        reject(new Error(`child server exited (${code ?? signal}) before listening:\n${err}`));
      });
    });
    const server: ChildServer = { url, pid: child.pid!, child, exited, stderr: () => err };
    this.children.add(server);
    void exited.then(() => this.children.delete(server));
    return server;
  }

  /** Stops one child (SIGTERM, then SIGKILL after a grace period) and waits for it. */
  async stop(server: ChildServer, graceMs = 3_000): Promise<void> {
    if (server.child.exitCode !== null || server.child.signalCode !== null) return;
    process.kill(server.pid, 'SIGTERM');
    const timer = setTimeout(() => {
      if (server.child.exitCode === null && server.child.signalCode === null)
        process.kill(server.pid, 'SIGKILL');
    }, graceMs);
    await server.exited;
    clearTimeout(timer);
  }

  async killAll(): Promise<void> {
    await Promise.all([...this.children].map((server) => this.stop(server, 1_000)));
  }
}

/** Asks a paid URL for its challenge and signs a payment for it: the `PAYMENT-SIGNATURE` value. */
export async function paymentHeader(url: string, payerKey: Hex, now?: number): Promise<string> {
  const response = await fetch(url);
  if (response.status !== 402) throw new Error(`expected 402 from ${url}, got ${response.status}`);
  const header = response.headers.get('payment-required');
  if (!header) throw new Error('no PAYMENT-REQUIRED header');
  const paymentRequired = decodeHeaderJson(header) as PaymentRequired;
  const payload = await createPaymentPayload({
    paymentRequired,
    account: privateKeyToAccount(payerKey),
    ...(now === undefined ? {} : { now }),
  });
  return encodeHeader(payload);
}

/** A response read whole: status, lower-case headers and body bytes. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export async function getRaw(url: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  const response = await fetch(url, { headers });
  const body = Buffer.from(await response.arrayBuffer());
  return { status: response.status, headers: Object.fromEntries(response.headers), body };
}

/** The token's Transfer logs from `from`, oldest first. */
export async function transfersFrom(devnet: Devnet, from: Address) {
  return devnet.publicClient.getContractEvents({
    address: devnet.token.address,
    abi: devnet.token.abi,
    eventName: 'Transfer',
    args: { from },
    fromBlock: 0n,
  });
}

/** The error code of an Error body or a PaymentRequired body. */
export function errorCodeOf(body: Buffer): string | undefined {
  const json = JSON.parse(body.toString('utf8')) as { error?: string | { code?: string } };
  return typeof json.error === 'string' ? json.error : json.error?.code;
}

// -- services -------------------------------------------------------------------------------

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Why Redis cannot be used, or undefined. */
export async function redisProblem(): Promise<string | undefined> {
  const client = new Redis(REDIS_URL, {
    lazyConnect: true,
    connectTimeout: 3_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
    return undefined;
  } catch (error) {
    return `Redis is not reachable at REDIS_URL=${REDIS_URL} (${(error as Error).message}); start it or set REDIS_URL`;
  } finally {
    client.disconnect();
  }
}

/** Why Postgres cannot be used, or undefined. */
export async function postgresProblem(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return `PostgreSQL is not reachable at DATABASE_URL=${DATABASE_URL} (${(error as Error).message}); start it or set DATABASE_URL`;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * `describe` when the service is there; otherwise a skipped block naming the service — except
 * under CI (`process.env.CI`), where a missing service is a failing test.
 */
export function describeWithService(name: string, problem: string | undefined, body: () => void): void {
  if (problem === undefined) {
    describe(name, body);
    return;
  }
  if (process.env.CI) {
    describe(name, () => {
      it('has its backing service available (required under CI)', () => {
        throw new Error(`${problem} (CI is set, so these tests cannot be skipped)`);
      });
    });
    return;
  }
  console.warn(`[ledger] skipping "${name}": ${problem}`);
  describe.skip(`${name} — skipped: ${problem}`, body);
}

/** A Redis key prefix of its own for one run (delete with {@link deleteRedisPrefix}). */
export const newRedisPrefix = () => `tollbooth-test:${randomBytes(6).toString('hex')}:`;

export async function deleteRedisPrefix(prefix: string): Promise<void> {
  const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      if (keys.length > 0) await client.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    await client.quit();
  }
}

/** A Postgres schema name of its own for one run (drop with {@link dropPostgresSchema}). */
export const newPostgresSchema = () => `tollbooth_test_${randomBytes(6).toString('hex')}`;

export async function dropPostgresSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** The ledger URL of a Postgres schema. */
export function postgresLedgerUrl(schema: string): string {
  const url = new URL(DATABASE_URL);
  url.searchParams.set('schema', schema);
  return url.toString();
}

/** The ledger URL of a Redis key prefix. */
export function redisLedgerUrl(prefix: string): string {
  const url = new URL(REDIS_URL);
  url.searchParams.set('prefix', prefix);
  return url.toString();
}
