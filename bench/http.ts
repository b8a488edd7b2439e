// Section 1: HTTP throughput with autocannon. Every server runs in its own process; the cases
// run interleaved (each round runs every case once, starting at a different case each round)
// after one warm-up run each, every measured run right after an unmeasured one (a server idle
// while the others ran is cold again), and every figure is compared with the bare framework
// measured in the same round.
import autocannon, { type RequestSpec, type Result } from 'autocannon';
import type { BenchConfig } from './lib/config';
import { HELLO_PATH, PAID_PATH } from './lib/fixtures';

const FEE_PREVIEW_PATH = '/api/v1/fees/preview';

import type { PaymentPool } from './lib/payments';
import { type ServerProcess, spawnServer } from './lib/server-process';
import { type Spread, spread } from './lib/stats';

export type CaseKind =
  | 'bare'
  | 'noop'
  | 'pass'
  | 'bytes402'
  | '402'
  | 'paid'
  | 'replay'
  | 'bytesreplay'
  | 'official-pass'
  | 'official-402'
  | 'fee-bare'
  | 'fee-preview';

export interface HttpCase {
  id: string;
  framework: string;
  label: string;
  kind: CaseKind;
  server: ServerProcess;
  path: string;
  /** Id of the case whose throughput this one is compared with (same round). */
  baseline?: string;
  expectStatus: number;
  /** Fixed header set, or a per-request header from a pool. */
  headers?: Record<string, string>;
  pool?: { headers: string[]; next: number };
}

export interface RunSample {
  rps: number;
  p50: number;
  p99: number;
  /** Server CPU (user + system) per request, µs. */
  cpuUs: number;
  /** Share of one core the server and the load generator (this process) used during the run, %. */
  serverBusy: number;
  clientBusy: number;
  requests: number;
  unexpected: number;
  errors: number;
}

export interface CaseResult {
  id: string;
  framework: string;
  label: string;
  kind: CaseKind;
  baseline?: string;
  samples: RunSample[];
  rps: Spread;
  p50: Spread;
  p99: Spread;
  cpuUs: Spread;
  serverBusy: Spread;
  clientBusy: Spread;
  /** Throughput / baseline throughput, per round. */
  ratio?: Spread;
  /** CPU per request minus the baseline's, per round, µs. */
  extraCpuUs?: Spread;
  /** Baseline CPU per request / this case's: the throughput ratio if both were bound by the server's CPU. */
  cpuRatio?: Spread;
  unexpected: number;
  errors: number;
  mode: string;
}

export interface HttpSectionResult {
  cases: CaseResult[];
  notes: string[];
  rounds: number;
  durationSeconds: number;
  warmupSeconds: number;
  connections: number;
  paidPerRun: number;
  rewarmSeconds: number;
  rewarmPayments: number;
}

export async function runOnce(
  c: HttpCase,
  config: BenchConfig,
  seconds: number,
  paidAmount = config.paidPerRun,
): Promise<RunSample> {
  const request: RequestSpec = { method: 'GET', path: c.path, ...(c.headers ? { headers: c.headers } : {}) };
  let amount: number | undefined;
  let firstAt: number | undefined;
  let lastAt: number | undefined;
  if (c.pool) {
    const pool = c.pool;
    amount = Math.min(paidAmount, pool.headers.length - pool.next);
    if (amount < Math.min(paidAmount, config.connections))
      throw new Error(`${c.id}: the payment pool is exhausted`);
    // autocannon ends a fixed-amount run on its next one-second tick: time the requests themselves.
    request.setupRequest = (req) => {
      firstAt ??= performance.now();
      const header = pool.headers[pool.next++];
      req.headers = { ...req.headers, 'payment-signature': header ?? 'exhausted' };
      return req;
    };
    request.onResponse = () => {
      lastAt = performance.now();
    };
  }
  const before = await c.server.cpu();
  const clientBefore = process.cpuUsage();
  const startedAt = performance.now();
  const result: Result = await autocannon({
    url: c.server.url,
    connections: config.connections,
    ...(amount === undefined ? { duration: seconds } : { amount }),
    requests: [request],
    timeout: 30,
  });
  const wallUs = (performance.now() - startedAt) * 1000;
  const client = process.cpuUsage(clientBefore);
  const elapsed = firstAt !== undefined && lastAt !== undefined ? (lastAt - firstAt) / 1000 : Number.NaN;
  const after = await c.server.cpu();
  const answered = result['1xx'] + result['2xx'] + result['3xx'] + result['4xx'] + result['5xx'];
  const expected =
    c.expectStatus === 402 ? (result.statusCodeStats?.['402']?.count ?? result['4xx']) : result['2xx'];
  const served = after.requests - before.requests;
  return {
    rps: answered / (amount === undefined ? result.duration : elapsed),
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuUs: served > 0 ? (after.user + after.system - before.user - before.system) / served : Number.NaN,
    serverBusy: (100 * (after.user + after.system - before.user - before.system)) / wallUs,
    clientBusy: (100 * (client.user + client.system)) / wallUs,
    requests: answered,
    unexpected: answered - expected,
    errors: result.errors + result.timeouts,
  };
}

/** Runs the cases interleaved and summarises them. */
/** One measured run of a case, with the baseline runs right before and after it. */
interface Bracketed {
  ratio: number;
  extraCpuUs: number;
  cpuRatio: number;
}

/**
 * Runs the cases interleaved and summarises them. Cases are grouped with their baseline; each
 * round visits the groups (and the cases inside a group) starting one further on, and inside a
 * group runs the baseline before every case and once more after the last (B A B C B D B …), so
 * each case is compared with the mean of the two baseline runs bracketing it: a machine whose load
 * drifts over seconds moves both alike.
 */
export async function runInterleaved(
  cases: HttpCase[],
  config: BenchConfig,
  options: {
    rounds: number;
    seconds: number;
    warmupSeconds: number;
    /**
     * An unmeasured run right before every measured one (seconds; payments for pool cases): a server
     * that sat idle while the other cases ran has had its heap shrunk and code flushed by V8's
     * memory reducer, which a server under steady load never has.
     */
    rewarm?: { seconds: number; payments: number };
    log: (line: string) => void;
  },
): Promise<CaseResult[]> {
  const samples = new Map<string, RunSample[]>(cases.map((c) => [c.id, []]));
  const bracketed = new Map<string, Bracketed[]>(cases.map((c) => [c.id, []]));
  if (options.warmupSeconds > 0) {
    for (const c of cases) {
      const s = await runOnce(c, config, options.warmupSeconds);
      options.log(`  warm-up ${c.id}: ${Math.round(s.rps)} req/s`);
    }
  }
  const byId = new Map(cases.map((c) => [c.id, c]));
  const groups: { baseline: HttpCase | undefined; members: HttpCase[] }[] = [];
  for (const c of cases) {
    if (c.baseline && byId.has(c.baseline)) continue;
    groups.push({ baseline: c, members: cases.filter((m) => m.baseline === c.id) });
  }
  const rotate = <T>(list: readonly T[], by: number) => list.map((_, i) => list[(i + by) % list.length]!);
  for (let round = 0; round < options.rounds; round++) {
    const line: string[] = [];
    const run = async (c: HttpCase) => {
      const rewarm = options.rewarm;
      if (rewarm && rewarm.seconds > 0) await runOnce(c, config, rewarm.seconds, rewarm.payments);
      const s = await runOnce(c, config, options.seconds);
      samples.get(c.id)!.push(s);
      line.push(`${c.id} ${Math.round(s.rps)}`);
      return s;
    };
    for (const group of rotate(groups, round)) {
      const base = group.baseline!;
      let before = await run(base);
      for (const member of rotate(group.members, round)) {
        const s = await run(member);
        const after = await run(base);
        const rps = (before.rps + after.rps) / 2;
        const cpu = (before.cpuUs + after.cpuUs) / 2;
        bracketed
          .get(member.id)!
          .push({ ratio: s.rps / rps, extraCpuUs: s.cpuUs - cpu, cpuRatio: cpu / s.cpuUs });
        before = after;
      }
    }
    options.log(`  round ${round + 1}/${options.rounds}: ${line.join(' | ')}`);
  }
  return cases.map((c) => summarise(c, samples, bracketed.get(c.id)!, config));
}

function summarise(
  c: HttpCase,
  all: Map<string, RunSample[]>,
  pairs: Bracketed[],
  config: BenchConfig,
): CaseResult {
  const samples = all.get(c.id)!;
  const result: CaseResult = {
    id: c.id,
    framework: c.framework,
    label: c.label,
    kind: c.kind,
    samples,
    rps: spread(samples.map((s) => s.rps)),
    p50: spread(samples.map((s) => s.p50)),
    p99: spread(samples.map((s) => s.p99)),
    cpuUs: spread(samples.map((s) => s.cpuUs)),
    serverBusy: spread(samples.map((s) => s.serverBusy)),
    clientBusy: spread(samples.map((s) => s.clientBusy)),
    unexpected: samples.reduce((n, s) => n + s.unexpected, 0),
    errors: samples.reduce((n, s) => n + s.errors, 0),
    mode: c.pool ? `${config.paidPerRun} requests per run` : `${config.durationSeconds} s per run`,
  };
  if (c.baseline) result.baseline = c.baseline;
  if (pairs.length > 0) {
    result.ratio = spread(pairs.map((p) => p.ratio));
    result.extraCpuUs = spread(pairs.map((p) => p.extraCpuUs));
    result.cpuRatio = spread(pairs.map((p) => p.cpuRatio));
  }
  return result;
}

interface FrameworkDef {
  key: string;
  name: string;
  file: string;
}

const FRAMEWORKS: FrameworkDef[] = [
  { key: 'express', name: 'Express 5', file: 'express' },
  { key: 'fastify', name: 'Fastify 5', file: 'fastify' },
  { key: 'koa', name: 'Koa 3', file: 'koa' },
];

/** Sends one payment and expects a 200: the payment the replay case sends again. */
async function settleOnce(server: ServerProcess, header: string): Promise<void> {
  const response = await fetch(`${server.url}${PAID_PATH}`, { headers: { 'payment-signature': header } });
  await response.arrayBuffer();
  if (response.status !== 200)
    throw new Error(`${server.name}: the replay payment answered ${response.status}`);
}

export async function runHttpSection(
  config: BenchConfig,
  pool: PaymentPool,
  log: (line: string) => void,
  servers: ServerProcess[],
): Promise<HttpSectionResult> {
  const notes: string[] = [];
  const cases: HttpCase[] = [];
  const replayHeader = pool.headers[pool.headers.length - 1]!;
  const paidHeaders = pool.headers.slice(0, -1);

  const start = async (name: string, file: string, args: string[] = []) => {
    try {
      const server = await spawnServer(name, file, { args });
      servers.push(server);
      return server;
    } catch (error) {
      notes.push(`${name} did not start (${(error as Error).message}); its cases are left out.`);
      log(`  ${name} did not start: ${(error as Error).message}`);
      return undefined;
    }
  };

  // BENCH_HTTP_CASES=fee/,fastify/402 runs only the cases whose id starts with one of these
  // prefixes, with the baselines they are compared with; the other servers are not started.
  const only = process.env['BENCH_HTTP_CASES']
    ?.split(',')
    .map((prefix) => prefix.trim())
    .filter(Boolean);
  const wanted = (id: string) => !only || only.some((prefix) => id.startsWith(prefix));
  const startIf = (id: string, name: string, file: string, args?: string[]) =>
    wanted(id) ? start(name, file, args) : Promise.resolve(undefined);

  for (const fw of FRAMEWORKS) {
    // One process per case: a case never runs on a heap or JIT state another case shaped (the
    // paid runs fill a ledger; the replay server holds one settled payment).
    const members = ['noop', 'pass', 'bytes402', '402', 'paid', 'bytesreplay', 'replay'].map(
      (kind) => `${fw.key}/${kind}`,
    );
    if (fw.key === 'express') members.push('x402/pass', 'x402/402');
    if (fw.key === 'fastify') members.push(...FEE_CASE_IDS);
    const bare = [`${fw.key}/bare`, ...members].some(wanted)
      ? await start(`${fw.key}-bare`, fw.file, ['bare'])
      : undefined;
    const noop = await startIf(`${fw.key}/noop`, `${fw.key}-noop`, fw.file, ['noop']);
    const pass = await startIf(`${fw.key}/pass`, `${fw.key}-pass`, fw.file, ['tollbooth']);
    const bytes402 = await startIf(`${fw.key}/bytes402`, `${fw.key}-bytes402`, fw.file, ['bytes402']);
    const challenge = await startIf(`${fw.key}/402`, `${fw.key}-402`, fw.file, ['tollbooth']);
    const paid = await startIf(`${fw.key}/paid`, `${fw.key}-paid`, fw.file, ['tollbooth']);
    const bytesReplay = await startIf(`${fw.key}/bytesreplay`, `${fw.key}-bytesreplay`, fw.file, [
      'bytesreplay',
    ]);
    const replay = await startIf(`${fw.key}/replay`, `${fw.key}-replay`, fw.file, ['tollbooth']);
    if (!bare) continue;
    if (replay) await settleOnce(replay, replayHeader);
    const baseline = `${fw.key}/bare`;
    const member = (
      server: ServerProcess | undefined,
      c: Omit<HttpCase, 'server' | 'framework' | 'baseline'>,
    ): HttpCase[] => (server ? [{ ...c, server, framework: fw.name, baseline }] : []);
    cases.push(
      {
        id: baseline,
        framework: fw.name,
        label: 'bare hello',
        kind: 'bare',
        server: bare,
        path: HELLO_PATH,
        expectStatus: 200,
      },
      ...member(noop, {
        id: `${fw.key}/noop`,
        label: `bare + one no-op ${fw.key === 'fastify' ? 'onRequest hook' : 'middleware'} (the floor of any gate mounted for every request)`,
        kind: 'noop',
        path: HELLO_PATH,
        expectStatus: 200,
      }),
      ...member(pass, {
        id: `${fw.key}/pass`,
        label: 'Tollbooth, unpaid route (pass-through)',
        kind: 'pass',
        path: HELLO_PATH,
        expectStatus: 200,
      }),
      ...member(bytes402, {
        id: `${fw.key}/bytes402`,
        label: "bare handler writing the 402's bytes, no gate (the floor of any 402 this size)",
        kind: 'bytes402',
        path: PAID_PATH,
        expectStatus: 402,
      }),
      ...member(challenge, {
        id: `${fw.key}/402`,
        label: 'Tollbooth, paid route without payment (402)',
        kind: '402',
        path: PAID_PATH,
        expectStatus: 402,
      }),
      ...member(paid, {
        id: `${fw.key}/paid`,
        label: 'Tollbooth, paid route with a valid payment',
        kind: 'paid',
        path: PAID_PATH,
        expectStatus: 200,
        pool: { headers: paidHeaders, next: 0 },
      }),
      ...member(bytesReplay, {
        id: `${fw.key}/bytesreplay`,
        label:
          "bare handler writing a replay's bytes (hello's body, its receipt header), no gate, asked with the same payment header (the floor of any replay this size)",
        kind: 'bytesreplay',
        path: PAID_PATH,
        expectStatus: 200,
        headers: { 'payment-signature': replayHeader },
      }),
      ...member(replay, {
        id: `${fw.key}/replay`,
        label: 'Tollbooth, idempotent replay of a settled payment',
        kind: 'replay',
        path: PAID_PATH,
        expectStatus: 200,
        headers: { 'payment-signature': replayHeader },
      }),
    );
    if (fw.key === 'express') {
      cases.push(
        ...member(await startIf('x402/pass', 'x402-pass', 'x402-express'), {
          id: 'x402/pass',
          label: 'official @x402/express, unpaid route (pass-through)',
          kind: 'official-pass',
          path: HELLO_PATH,
          expectStatus: 200,
        }),
        ...member(await startIf('x402/402', 'x402-402', 'x402-express'), {
          id: 'x402/402',
          label: 'official @x402/express, paid route without payment (402)',
          kind: 'official-402',
          path: PAID_PATH,
          expectStatus: 402,
        }),
      );
    }
  }
  const feeCases = FEE_CASE_IDS.some(wanted) ? await feeServiceCases(start, notes) : [];
  cases.push(...feeCases);

  log(
    `  ${cases.length} cases, ${config.rounds} rounds x ${config.durationSeconds} s after ${config.warmupSeconds} s warm-up`,
  );
  const results = await runInterleaved(cases, config, {
    rounds: config.rounds,
    seconds: config.durationSeconds,
    warmupSeconds: config.warmupSeconds,
    rewarm: { seconds: config.rewarmSeconds, payments: config.rewarmPayments },
    log,
  });
  return {
    cases: results,
    notes,
    rounds: config.rounds,
    durationSeconds: config.durationSeconds,
    warmupSeconds: config.warmupSeconds,
    connections: config.connections,
    paidPerRun: config.paidPerRun,
    rewarmSeconds: config.rewarmSeconds,
    rewarmPayments: config.rewarmPayments,
  };
}

const FEE_CASE_IDS = ['fee/bare', 'fee/preview'];

/**
 * The fee service's free preview endpoint (the whole service on its default Fastify mount) against
 * its bare framework's hello, and the same preview responder alone on a bare Fastify app.
 */
async function feeServiceCases(
  start: (name: string, file: string, args?: string[]) => Promise<ServerProcess | undefined>,
  notes: string[],
): Promise<HttpCase[]> {
  const service = await start('fee-service', 'fee-service', ['service']);
  const bare = await start('fee-preview-bare', 'fee-service', ['bare']);
  if (!service || !bare) return [];
  for (const server of [service, bare]) {
    const probe = await fetch(`${server.url}${FEE_PREVIEW_PATH}`);
    await probe.arrayBuffer();
    if (probe.status !== 200) {
      notes.push(
        `${server.name} answered the preview with ${probe.status}; the fee preview cases are left out.`,
      );
      return [];
    }
  }
  // The target compares the preview with its bare framework's hello (bare Fastify, the fastify
  // group's baseline); the preview responder alone on bare Fastify shows the service's own share.
  return [
    {
      id: 'fee/bare',
      framework: 'Fastify 5',
      label: 'preview responder alone on bare Fastify (no gate, metrics or hooks)',
      kind: 'fee-bare',
      server: bare,
      path: FEE_PREVIEW_PATH,
      baseline: 'fastify/bare',
      expectStatus: 200,
    },
    {
      id: 'fee/preview',
      framework: 'Fastify 5',
      label: 'fee service: GET /api/v1/fees/preview (Tollbooth gate, metrics, hooks)',
      kind: 'fee-preview',
      server: service,
      path: FEE_PREVIEW_PATH,
      baseline: 'fastify/bare',
      expectStatus: 200,
    },
  ];
}
