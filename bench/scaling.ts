// Section 4: cost against size. The 402 path and an unpaid route over HTTP with 1, 10, 100 and
// 1,000 paid routes (Fastify, the framework with the least overhead of its own, so the gate's
// share shows most), the paid path in process at the same route counts, and the memory ledger
// holding 10^4 and 10^6 entries.
import { createMemoryLedgerStore, createPaymentGate, type LedgerEntry } from '@tollbooth/core';
import { createExactEvmScheme } from '@tollbooth/evm';
import type { BenchConfig } from './lib/config';
import { benchRoutes, createInstantFacilitator, HELLO_PATH, PAID_PATH } from './lib/fixtures';
import type { CaseResult, HttpCase } from './lib/http-case';
import { type MicroResult, measure, PAID_OPS, PAID_WARMUP_OPS } from './lib/measure';
import { claimAndFinish, entryFor, paidPathOp, viewOf } from './lib/paid-path';
import type { PaymentPool } from './lib/payments';
import { runInterleaved } from './lib/run-cases';
import { type ServerProcess, spawnServer } from './lib/server-process';

export const ROUTE_COUNTS = [1, 10, 100, 1000] as const;
export const LEDGER_SIZES = [10_000, 1_000_000] as const;

export interface ScalingSectionResult {
  http: CaseResult[];
  inProcess: MicroResult[];
  ledger: (MicroResult & { entries: number; heapMiB: number })[];
  notes: string[];
}

export async function runScalingSection(
  config: BenchConfig,
  pool: PaymentPool,
  log: (line: string) => void,
  servers: ServerProcess[],
): Promise<ScalingSectionResult> {
  const notes: string[] = [];
  const inProcess: MicroResult[] = [];
  const add = (r: MicroResult) => {
    inProcess.push(r);
    log(`  ${r.name}: ${r.cpuUs.median.toFixed(1)} µs CPU`);
  };

  // -- in process: the gate at each route count ---------------------------------------------------
  for (const routes of ROUTE_COUNTS) {
    const gate = createPaymentGate({
      routes: benchRoutes(routes - 1),
      schemes: [createExactEvmScheme()],
      facilitator: createInstantFacilitator(),
    });
    add(
      await measure(`${routes} routes`, `402 path, ${routes} routes`, 2000, config.batches, async () => {
        const o = await gate.handle(viewOf(PAID_PATH));
        if (o.kind !== 'respond' || o.response.status !== 402) throw new Error('expected 402');
      }),
    );
    add(
      await measure(`${routes} routes`, `pass-through, ${routes} routes`, 2000, config.batches, async () => {
        const o = await gate.handle(viewOf(HELLO_PATH));
        if (o.kind !== 'pass') throw new Error('expected pass');
      }),
    );
    add(
      await measure(
        `${routes} routes`,
        `paid path (handle + finish), ${routes} routes`,
        PAID_OPS,
        config.batches,
        paidPathOp(gate, pool.headers),
        undefined,
        PAID_WARMUP_OPS,
      ),
    );
    await gate.ledger.close();
  }

  // -- the memory ledger at 10^4 and 10^6 entries ---------------------------------------------------
  const ledger: ScalingSectionResult['ledger'] = [];
  const payload = pool.payloads[0]!;
  const requirement = payload.accepted;
  for (const size of LEDGER_SIZES) {
    const store = createMemoryLedgerStore({ purgeIntervalMs: 0 });
    const template = entryFor(payload, requirement, 'x');
    // Filler entries are settled entries of the same shape with a small payload: only their number matters to a Map.
    const filler: LedgerEntry = { ...template, state: 'settled', payload: { n: 0 } };
    const t0 = performance.now();
    for (let i = 0; i < size; i++) await store.claim({ ...filler, id: `fill:${i}` });
    const heapMiB = process.memoryUsage().heapUsed / 2 ** 20;
    log(
      `  memory ledger filled with ${size} entries in ${((performance.now() - t0) / 1000).toFixed(1)} s (heap ${heapMiB.toFixed(0)} MiB)`,
    );
    const r = await measure(
      'memory ledger',
      `claim + 3 state changes, ${size.toLocaleString('en-US')} entries`,
      2000,
      config.batches,
      (i) => claimAndFinish(store, entryFor(payload, requirement, `new:${i}`)),
    );
    const g = await measure(
      'memory ledger',
      `get of an existing entry, ${size.toLocaleString('en-US')} entries`,
      5000,
      config.batches,
      (i) => store.get(`fill:${(i * 7919) % size}`),
    );
    for (const m of [r, g]) {
      ledger.push({ ...m, entries: size, heapMiB });
      log(`  ${m.name}: ${m.cpuUs.median.toFixed(1)} µs CPU`);
    }
    await store.close();
  }

  // -- HTTP: Fastify with 1 … 1,000 paid routes -----------------------------------------------------
  const cases: HttpCase[] = [];
  for (const routes of ROUTE_COUNTS) {
    try {
      const server = await spawnServer(`fastify-${routes}-routes`, 'fastify', {
        args: ['tollbooth'],
        env: { BENCH_ROUTES: String(routes - 1) },
      });
      servers.push(server);
      cases.push(
        {
          id: `routes-${routes}/402`,
          framework: 'Fastify 5',
          label: `402 path, ${routes} paid routes`,
          kind: '402',
          server,
          path: PAID_PATH,
          expectStatus: 402,
          ...(routes === 1 ? {} : { baseline: 'routes-1/402' }),
        },
        {
          id: `routes-${routes}/pass`,
          framework: 'Fastify 5',
          label: `unpaid route, ${routes} paid routes`,
          kind: 'pass',
          server,
          path: HELLO_PATH,
          expectStatus: 200,
          ...(routes === 1 ? {} : { baseline: 'routes-1/pass' }),
        },
      );
    } catch (error) {
      notes.push(`Fastify with ${routes} routes did not start (${(error as Error).message}).`);
    }
  }
  log(`  HTTP: ${cases.length} cases, ${config.scalingRounds} rounds x ${config.scalingSeconds} s`);
  const http = await runInterleaved(cases, config, {
    rounds: config.scalingRounds,
    seconds: config.scalingSeconds,
    warmupSeconds: 1,
    rewarm: { seconds: config.rewarmSeconds, payments: config.rewarmPayments },
    log,
  });
  return { http, inProcess, ledger, notes };
}
