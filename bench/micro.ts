// Section 3 (and the ledger part of section 4): micro-benchmarks of the gate's paid-path pieces,
// in µs per operation: the median of repeated batches (performance.now for wall time,
// process.cpuUsage for CPU), after one warm-up batch.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AnyPaymentPayload,
  createMemoryLedgerStore,
  createPaymentGate,
  decodeHeaderJson,
  decodePaymentHeader,
  type LedgerEntry,
  type LedgerStore,
  type PaymentPayload,
  type PaymentRequirements,
  type RequestView,
} from '@tollbooth/core';
import {
  createExactEvmScheme,
  hashTransferAuthorization,
  preVerifyExactEvmPayment,
  type RecoveryBackend,
  recoverSignerAddress,
} from '@tollbooth/evm';
import type { BenchConfig } from './lib/config';
import { benchRoutes, createInstantFacilitator, HELLO_PATH, PAID_PATH } from './lib/fixtures';
import type { PaymentPool } from './lib/payments';
import { type Spread, spread } from './lib/stats';

export interface MicroResult {
  group: string;
  name: string;
  /** Wall time per operation, µs. */
  wallUs: Spread;
  /** CPU (user + system) per operation, µs. */
  cpuUs: Spread;
  opsPerBatch: number;
  note?: string;
}

export interface MicroSectionResult {
  results: MicroResult[];
  notes: string[];
}

type Op = (i: number) => unknown;

/**
 * Paid-path measures: a warm-up long enough for V8 to optimise the whole path (the first couple of
 * thousand payments run several times slower), then batches of this many payments.
 */
export const PAID_WARMUP_OPS = 2000;
export const PAID_OPS = 300;

/** Distinct payments one paid-path measure uses. */
export const paidOpsNeeded = (batches: number) => PAID_WARMUP_OPS + batches * PAID_OPS;

/**
 * Runs `batches` batches of `ops` operations after one warm-up batch of `warmupOps` (default
 * `ops`); awaits each op if it returns a promise.
 */
export async function measure(
  group: string,
  name: string,
  ops: number,
  batches: number,
  op: Op,
  note?: string,
  warmupOps = ops,
): Promise<MicroResult> {
  const wall: number[] = [];
  const cpu: number[] = [];
  let i = 0;
  for (let b = 0; b <= batches; b++) {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const count = b === 0 ? warmupOps : ops;
    for (let k = 0; k < count; k++) {
      const r = op(i++);
      if (r instanceof Promise) await r;
    }
    const t1 = performance.now();
    const c = process.cpuUsage(cpu0);
    if (b === 0) continue; // warm-up
    wall.push(((t1 - t0) * 1000) / ops);
    cpu.push((c.user + c.system) / ops);
  }
  return {
    group,
    name,
    wallUs: spread(wall),
    cpuUs: spread(cpu),
    opsPerBatch: ops,
    ...(note ? { note } : {}),
  };
}

/** A ledger entry as the gate would write it for `payload`. */
export function entryFor(payload: PaymentPayload, requirement: PaymentRequirements, id: string): LedgerEntry {
  const now = Date.now();
  const auth = payload.payload['authorization'] as { from: string; validBefore: string };
  return {
    id,
    state: 'claimed',
    resource: `http://127.0.0.1${PAID_PATH}`,
    route: `GET ${PAID_PATH}`,
    network: requirement.network,
    payer: auth.from,
    payload,
    requirements: requirement,
    validBefore: Number(auth.validBefore),
    owner: `bench:${id}`,
    leaseUntil: now + 300_000,
    createdAt: now,
    updatedAt: now,
    expiresAt: Number(auth.validBefore) * 1000 + 86_400_000,
  };
}

const RESPONSE = {
  status: 200,
  headers: { 'content-type': 'application/json', 'payment-response': 'eyJzdWNjZXNzIjp0cnVlfQ==' },
  body: Buffer.from('{"hello":"world"}'),
};

/** claim, then verified → settling → settled (with the response): what one paid request does to the ledger. */
export async function claimAndFinish(store: LedgerStore, entry: LedgerEntry): Promise<void> {
  const claimed = await store.claim(entry);
  if (!claimed.acquired) throw new Error(`claim of ${entry.id} was not acquired`);
  const expect = { owner: entry.owner };
  if (!(await store.update(entry.id, { ...expect, state: ['claimed'] }, { state: 'verified' })))
    throw new Error('verified CAS failed');
  if (
    !(await store.update(
      entry.id,
      { ...expect, state: ['verified'] },
      { state: 'settling', response: RESPONSE },
    ))
  )
    throw new Error('settling CAS failed');
  if (
    !(await store.update(
      entry.id,
      { ...expect, state: ['settling'] },
      { state: 'settled', receipt: { success: true }, response: RESPONSE },
    ))
  )
    throw new Error('settled CAS failed');
}

/** A RequestView for a GET of `path`, with optional headers. */
export function viewOf(path: string, headers: Record<string, string> = {}): RequestView {
  return {
    method: 'GET',
    url: `http://127.0.0.1${path}`,
    header: (name) => headers[name.toLowerCase()],
  };
}

/** The in-process paid path: gate.handle (decode, schema, pre-verify, claim, verify) then gate.finish (settle). */
export function paidPathOp(
  gate: ReturnType<typeof createPaymentGate>,
  headers: readonly string[],
  path = PAID_PATH,
) {
  return async (i: number) => {
    const header = headers[i];
    if (header === undefined) throw new Error('the payment pool is exhausted');
    const outcome = await gate.handle(viewOf(path, { 'payment-signature': header }));
    if (outcome.kind !== 'proceed') throw new Error(`expected proceed, got ${outcome.kind}`);
    const response = await gate.finish(outcome.payment, RESPONSE);
    if (response.status !== 200) throw new Error(`finish answered ${response.status}`);
  };
}

export async function runMicroSection(
  config: BenchConfig,
  pool: PaymentPool,
  log: (line: string) => void,
): Promise<MicroSectionResult> {
  const results: MicroResult[] = [];
  const notes: string[] = [];
  const batches = config.batches;
  const add = (r: MicroResult) => {
    results.push(r);
    log(
      `  ${r.group} / ${r.name}: ${r.wallUs.median.toFixed(2)} µs wall, ${r.cpuUs.median.toFixed(2)} µs CPU`,
    );
  };
  const header = pool.headers[0]!;
  const payload = pool.payloads[0]!;
  const requirement = payload.accepted;
  const json = decodeHeaderJson(header);
  const auth = payload.payload['authorization'] as Parameters<
    typeof hashTransferAuthorization
  >[0]['authorization'];
  const signature = payload.payload['signature'] as `0x${string}`;
  const domain = {
    name: 'USD Coin',
    version: '2',
    chainId: 8453,
    verifyingContract: requirement.asset as `0x${string}`,
  };
  const digest = hashTransferAuthorization({ domain, authorization: auth });
  const now = Math.floor(Date.now() / 1000);

  // -- the pieces, in the order the gate runs them ------------------------------------------------
  add(
    await measure('paid path pieces', 'header decode (base64 + UTF-8 + JSON.parse)', 2000, batches, () =>
      decodeHeaderJson(header),
    ),
  );
  add(
    await measure('paid path pieces', 'schema check (zod, x402 payload)', 2000, batches, () =>
      AnyPaymentPayload.parse(json),
    ),
  );
  add(
    await measure('paid path pieces', 'decodePaymentHeader (both of the above)', 2000, batches, () =>
      decodePaymentHeader(header),
    ),
  );
  add(
    await measure('paid path pieces', 'EIP-712 digest of the authorization', 2000, batches, () =>
      hashTransferAuthorization({ domain, authorization: auth }),
    ),
  );
  for (const backend of ['native', 'noble'] as RecoveryBackend[]) {
    const ops = backend === 'native' ? 500 : 20;
    add(
      await measure('signature recovery', `recoverSignerAddress, ${backend}`, ops, batches, () => {
        if (!recoverSignerAddress({ hash: digest, signature, backend })) throw new Error('no signer');
      }),
    );
    add(
      await measure('signature recovery', `preVerify (whole scheme check), ${backend}`, ops, batches, () => {
        const r = preVerifyExactEvmPayment({ payload, requirements: requirement, now, backend });
        if (!r.ok) throw new Error(r.message);
      }),
    );
  }

  // -- the memory ledger ---------------------------------------------------------------------------
  {
    const store = createMemoryLedgerStore({ purgeIntervalMs: 0 });
    add(
      await measure(
        'ledger',
        'memory store: claim + 3 state changes (one paid request)',
        2000,
        batches,
        (i) => claimAndFinish(store, entryFor(payload, requirement, `m:${i}`)),
      ),
    );
    await store.close();
  }

  // -- the whole gate, in process ------------------------------------------------------------------
  for (const backend of ['native', 'noble'] as RecoveryBackend[]) {
    const gate = createPaymentGate({
      routes: benchRoutes(),
      schemes: [createExactEvmScheme({ recoveryBackend: backend })],
      facilitator: createInstantFacilitator(),
    });
    const native = backend === 'native';
    add(
      await measure(
        'gate, in process',
        `paid path: handle + finish, instant facilitator, ${backend} recovery`,
        native ? PAID_OPS : 20,
        batches,
        paidPathOp(gate, pool.headers),
        undefined,
        native ? PAID_WARMUP_OPS : 20,
      ),
    );
    await gate.ledger.close();
  }
  {
    const gate = createPaymentGate({
      routes: benchRoutes(),
      schemes: [createExactEvmScheme()],
      facilitator: createInstantFacilitator(),
    });
    add(
      await measure('gate, in process', '402 path: handle without payment', 2000, batches, async () => {
        const o = await gate.handle(viewOf(PAID_PATH));
        if (o.kind !== 'respond' || o.response.status !== 402) throw new Error('expected 402');
      }),
    );
    add(
      await measure(
        'gate, in process',
        'pass-through: isPaid of an unpaid route (what adapters call)',
        5000,
        batches,
        () => {
          if (gate.isPaid('GET', HELLO_PATH)) throw new Error('expected unpaid');
        },
      ),
    );
    add(
      await measure(
        'gate, in process',
        'pass-through: handle of an unpaid route',
        2000,
        batches,
        async () => {
          const o = await gate.handle(viewOf(HELLO_PATH));
          if (o.kind !== 'pass') throw new Error('expected pass');
        },
      ),
    );
    // Replay: the same settled payment again (decode, schema, pre-verify, ledger lookup).
    const replay = pool.headers[pool.headers.length - 1]!;
    const first = await gate.handle(viewOf(PAID_PATH, { 'payment-signature': replay }));
    if (first.kind !== 'proceed') throw new Error('replay seed was not accepted');
    await gate.finish(first.payment, RESPONSE);
    add(
      await measure(
        'gate, in process',
        'idempotent replay: handle of a settled payment',
        500,
        batches,
        async () => {
          const o = await gate.handle(viewOf(PAID_PATH, { 'payment-signature': replay }));
          if (o.kind !== 'replay') throw new Error(`expected replay, got ${o.kind}`);
        },
      ),
    );
    await gate.ledger.close();
  }

  // -- durable stores --------------------------------------------------------------------------------
  results.push(...(await durableStores(config, pool, notes, log)));
  return { results, notes };
}

async function durableStores(
  config: BenchConfig,
  pool: PaymentPool,
  notes: string[],
  log: (line: string) => void,
): Promise<MicroResult[]> {
  const out: MicroResult[] = [];
  const payload = pool.payloads[0]!;
  const requirement = payload.accepted;
  const tag = randomBytes(4).toString('hex');
  const ops = config.quick ? 50 : 200;
  const run = async (
    name: string,
    open: () => Promise<{ store: LedgerStore; cleanup: () => Promise<void> }>,
  ) => {
    let opened: { store: LedgerStore; cleanup: () => Promise<void> };
    try {
      opened = await open();
    } catch (error) {
      notes.push(`${name}: skipped (${(error as Error).message}).`);
      log(`  ${name}: skipped (${(error as Error).message})`);
      return;
    }
    try {
      const claimOnly = await measure('durable ledger stores', `${name}: claim`, ops, config.batches, (i) =>
        opened.store.claim(entryFor(payload, requirement, `c:${tag}:${i}`)),
      );
      const full = await measure(
        'durable ledger stores',
        `${name}: claim + 3 state changes (one paid request)`,
        ops,
        config.batches,
        (i) => claimAndFinish(opened.store, entryFor(payload, requirement, `f:${tag}:${i}`)),
      );
      for (const r of [claimOnly, full]) {
        out.push(r);
        log(`  ${r.name}: ${r.wallUs.median.toFixed(0)} µs wall, ${r.cpuUs.median.toFixed(0)} µs CPU`);
      }
    } catch (error) {
      notes.push(`${name}: failed (${(error as Error).message}).`);
    } finally {
      await opened.cleanup().catch(() => {});
    }
  };

  await run('SQLite (file, WAL)', async () => {
    const { createSqliteLedgerStore } = await import('@tollbooth/store-sqlite');
    const dir = mkdtempSync(join(tmpdir(), 'tollbooth-bench-'));
    const store = createSqliteLedgerStore({ filename: join(dir, 'ledger.db'), purgeIntervalMs: 0 });
    return {
      store,
      cleanup: async () => {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  });

  await run('Redis', async () => {
    const { createRedisLedgerStore } = await import('@tollbooth/store-redis');
    const { Redis } = await import('ioredis');
    const url = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
    const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 2000 });
    await redis.connect();
    await redis.ping();
    const keyPrefix = `tollbooth:bench:${tag}:`;
    const store = createRedisLedgerStore({ redis, keyPrefix, purgeIntervalMs: 0 });
    return {
      store,
      cleanup: async () => {
        await store.close();
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${keyPrefix}*`, 'COUNT', 1000);
          cursor = next;
          if (keys.length > 0) await redis.del(...keys);
        } while (cursor !== '0');
        redis.disconnect();
      },
    };
  });

  await run('PostgreSQL', async () => {
    const { createPostgresLedgerStore } = await import('@tollbooth/store-postgres');
    const pg = (await import('pg')).default;
    const pool = new pg.Pool({
      connectionString: process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test',
      connectionTimeoutMillis: 2000,
    });
    await pool.query('select 1');
    const tableName = `tollbooth_bench_${tag}`;
    const store = createPostgresLedgerStore({ pool, tableName, purgeIntervalMs: 0 });
    await store.migrate();
    return {
      store,
      cleanup: async () => {
        await store.close();
        await pool.query(`drop table if exists ${tableName}`);
        await pool.end();
      },
    };
  });
  return out;
}
