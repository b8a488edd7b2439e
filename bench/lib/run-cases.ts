// Runs HTTP cases with autocannon: one run of a case (throughput, latency, server and client
// CPU), and the interleaved rounds that compare each case with its baseline (section 1, the
// scaling section's HTTP part and the profiles use them).
import autocannon, { type RequestSpec, type Result } from 'autocannon';
import type { BenchConfig } from './config';
import { MCP_HEADERS } from './fixtures';
import type { CaseResult, HttpCase, RunSample } from './http-case';
import { spread } from './stats';

export async function runOnce(
  c: HttpCase,
  config: BenchConfig,
  seconds: number,
  paidAmount = config.paidPerRun,
): Promise<RunSample> {
  const request: RequestSpec = c.pool?.bodies
    ? { method: 'POST', path: c.path, headers: MCP_HEADERS }
    : { method: 'GET', path: c.path, ...(c.headers ? { headers: c.headers } : {}) };
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
      if (pool.bodies) {
        // A tools/call carries its payment in the body's _meta, not in a header.
        req.body = pool.bodies[pool.next++] ?? 'exhausted';
        return req;
      }
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
