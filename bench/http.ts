// Section 1: HTTP throughput with autocannon. Every server runs in its own process; the cases
// run interleaved (each round runs every case once, starting at a different case each round)
// after one warm-up run each, every measured run right after an unmeasured one (a server idle
// while the others ran is cold again), and every figure is compared with the bare framework
// measured in the same round.
import type { BenchConfig } from './lib/config';
import { HELLO_PATH, PAID_PATH } from './lib/fixtures';
import type { HttpCase, HttpSectionResult } from './lib/http-case';
import type { PaymentPool } from './lib/payments';
import { runInterleaved } from './lib/run-cases';
import { type ServerProcess, spawnServer } from './lib/server-process';
import { MCP_CASE_ID, MCP_PER_REQUEST_CASE_ID, mcpCases } from './mcp';

const FEE_PREVIEW_PATH = '/api/v1/fees/preview';

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
  const mcp = {
    pooled: wanted(MCP_CASE_ID),
    // Opt-in: the endpoint as it was, for a before/after in one run (BENCH_HTTP_CASES=mcp/).
    perRequest: only !== undefined && wanted(MCP_PER_REQUEST_CASE_ID),
  };
  if (mcp.pooled || mcp.perRequest)
    cases.push(...(await mcpCases(start, pool.payloads.slice(0, -1), notes, mcp)));

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
