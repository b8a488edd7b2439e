// The targets table of docs/benchmarks.md: each target the benchmarks set, judged on this
// run's figures (capacity first), with the figure, the verdict and why.
import { aiTarget } from './ai-report';
import {
  type BenchReport,
  failedBaseline,
  findCase,
  microOf,
  roundCpuRatio,
  roundRatio,
} from './bench-report';
import { chainTargets } from './chain-report';
import { latencyTarget } from './latency-report';
import type { CaseResult } from './lib/http-case';
import { fmt, fmtRatio, fmtSpread, type Spread, spread } from './lib/stats';
import { observatoryTarget } from './observatory-report';
import type { ProfiledCase } from './profile';

export type Verdict = 'met' | 'missed' | 'not measured';

export interface TargetRow {
  target: string;
  figure: string;
  verdict: Verdict;
  why?: string;
}

export function verdictCell(v: Verdict): string {
  return v === 'met' ? '**met**' : v === 'missed' ? '**missed**' : 'not measured';
}

const µs = (s: Spread | undefined, digits = 0) => (s ? fmtSpread(s, digits, ' µs') : 'n/a');

/** "capacity … ; throughput …" for a case compared with its bare framework. */
function ratioFigure(c: CaseResult): string {
  return `capacity ${c.cpuRatio ? fmtRatio(c.cpuRatio) : 'n/a'} of bare; throughput ${c.ratio ? fmtRatio(c.ratio) : 'n/a'}`;
}

/**
 * Why a throughput ratio reads lower than the capacity ratio: the load generator shares the
 * machine, and when it is the busier side the server waits for requests.
 */
function clientBoundNote(c: CaseResult, base: CaseResult | undefined): string {
  if (!c.ratio || !c.cpuRatio || c.ratio.median >= c.cpuRatio.median - 0.02) return '';
  return ` Throughput reads lower than capacity because autocannon (one process, a JavaScript HTTP parser) was the busier side: it used ${fmt(c.clientBusy.median, 0)} % of a core against the server's ${fmt(c.serverBusy.median, 0)} %${base ? ` (bare: ${fmt(base.clientBusy.median, 0)} % / ${fmt(base.serverBusy.median, 0)} %)` : ''}, and a bigger response costs the client more to parse.`;
}

/**
 * The targets, judged on **capacity**: requests per second of server CPU (bare CPU per request ÷
 * the case's, same round). Throughput is reported beside it; on a 2-CPU machine the load
 * generator takes one core and is itself the limit for the fastest servers.
 */
export function targets(r: BenchReport): TargetRow[] {
  const rows: TargetRow[] = [];
  const frameworks = [
    ['express', 'Express 5'],
    ['fastify', 'Fastify 5'],
    ['koa', 'Koa 3'],
  ] as const;
  const ratioTarget = (
    id: string,
    target: string,
    threshold: number,
    whyMissed: (c: CaseResult) => string,
  ): void => {
    const c = findCase(r.http, id);
    const base = c?.baseline ? findCase(r.http, c.baseline) : undefined;
    if (!c?.cpuRatio) {
      rows.push({ target, figure: 'n/a', verdict: 'not measured' });
      return;
    }
    const ok = c.cpuRatio.median >= threshold;
    const suspect =
      c.baseline && failedBaseline(r, c.baseline.replace('/bare', ''))
        ? ` **This framework's baseline check failed in this run (section 1): the ratio is not to be trusted.**`
        : '';
    const note = clientBoundNote(c, base) + suspect;
    const extra = `Server CPU over bare: ${µs(c.extraCpuUs, 1)} per request (bare ${fmt(base?.cpuUs.median ?? Number.NaN, 0)} µs).`;
    rows.push({
      target,
      figure: ratioFigure(c),
      verdict: ok ? 'met' : 'missed',
      ...(ok ? (note ? { why: `${extra}${note}` } : {}) : { why: `${extra} ${whyMissed(c)}${note}` }),
    });
  };

  for (const [key, name] of frameworks) {
    const noop = findCase(r.http, `${key}/noop`);
    ratioTarget(`${key}/pass`, `Pass-through overhead ≤ 3 % of bare (${name})`, 0.97, () => {
      const lookup = microOf(r, 'pass-through: isPaid')?.cpuUs.median ?? Number.NaN;
      const bare = findCase(r.http, `${key}/bare`)?.cpuUs.median ?? Number.NaN;
      return `What the gate adds to a free request is one synchronous route lookup (\`gate.isPaid\`, no promise): ${fmt(lookup, 2)} µs in process (section 3), ${fmt((100 * lookup) / bare, 1)} % of this framework's ${fmt(bare, 0)} µs per bare request. The rest is the framework's own price of one more ${key === 'fastify' ? 'onRequest hook' : 'middleware'}: the same app with a ${key === 'fastify' ? 'hook' : 'middleware'} that only calls the next one (the no-op row) reads ${noop?.cpuRatio ? fmtRatio(noop.cpuRatio) : 'n/a'} of bare in this run. The ranges span tens of points from round to round, so a 3 % difference cannot be resolved on this machine; the bound that can be stated is the lookup's share above.`;
    });
  }
  for (const [key, name] of frameworks) {
    ratioTarget(`${key}/402`, `402 path ≥ 95 % of bare hello (${name})`, 0.95, (c) => {
      const bytes = findCase(r.http, `${key}/bytes402`);
      const gateShare = roundCpuRatio(c, bytes);
      const inProcess = fmt(microOf(r, '402 path: handle')?.cpuUs.median ?? Number.NaN, 1);
      const floor = bytes?.cpuRatio
        ? `The same 402 (status, six headers among them PAYMENT-REQUIRED with ~540 bytes of base64, and the ~400-byte JSON body) written by a bare handler, with no gate at all, reads ${fmtRatio(bytes.cpuRatio)} of bare hello in this run (the "bare handler writing the 402's bytes" row): that is the framework's price of a bigger response than hello's, a floor no gate can go below. Against that row the gate's 402 reads ${gateShare ? fmtRatio(gateShare) : 'n/a'}.`
        : "The rest is the framework writing a bigger response than hello's (six headers, among them PAYMENT-REQUIRED with ~540 bytes of base64, and a ~400-byte JSON body).";
      return `The gate's own part is a route lookup and a cached challenge (${inProcess} µs in process, section 3). ${floor} What would reach it: a smaller challenge (the header repeats the body; the bazaar extension could stay out of the header).`;
    });
  }
  {
    const ours = findCase(r.http, 'express/402');
    const official = findCase(r.http, 'x402/402');
    const capacity = roundCpuRatio(ours, official);
    const throughput = roundRatio(ours, official);
    const ok = capacity !== undefined && capacity.median >= 1.7;
    // The most any 402 of these bytes can reach: the official 402's CPU ÷ a bare handler writing them.
    const bound = roundCpuRatio(findCase(r.http, 'express/bytes402'), official);
    rows.push({
      target: '402 path ≥ 1.7× the official @x402/express (Express 5)',
      figure: capacity
        ? `capacity ${fmt(capacity.median, 2)}× (${fmt(capacity.min, 2)}–${fmt(capacity.max, 2)}); throughput ${throughput ? `${fmt(throughput.median, 2)}× (${fmt(throughput.min, 2)}–${fmt(throughput.max, 2)})` : 'n/a'}`
        : 'n/a',
      verdict: capacity ? (ok ? 'met' : 'missed') : 'not measured',
      ...(capacity
        ? {
            why: `Server CPU per 402: Tollbooth ${fmt(ours?.cpuUs.median ?? Number.NaN, 0)} µs, official ${fmt(official?.cpuUs.median ?? Number.NaN, 0)} µs, bare hello ${fmt(findCase(r.http, 'express/bare')?.cpuUs.median ?? Number.NaN, 0)} µs. Express itself is most of each figure, so the ratio is bounded by how far below bare hello a 402 can go: ${bound ? `a bare Express handler writing the same 402 bytes with no gate at all (the floor row) reads ${fmt(bound.median, 2)}× (${fmt(bound.min, 2)}–${fmt(bound.max, 2)}) the official middleware's capacity in this run, the most any 402 of this size can reach here${ok ? '' : bound.median < 1.7 ? ", so 1.7× is out of reach on this machine by Express's own cost, whatever the gate does; the issue's 1.7× was set where the official 402 ran at about 56 % of Express hello, and here it runs at " + fmtRatio(official?.cpuRatio ?? spread([])) : ''}` : 'the floor row was not measured'}.${ok ? '' : " What would reach it: a 402 cheaper than the framework's own hello, which only a smaller challenge (fewer header bytes) or a faster Express could give."}`,
          }
        : {}),
    });
  }
  // Paid path CPU: HTTP (paid route minus bare hello, same framework and round) and in process.
  {
    const perFramework = frameworks
      .map(([key, name]) => ({ name, c: findCase(r.http, `${key}/paid`) }))
      .filter((x) => x.c?.extraCpuUs && x.c.extraCpuUs.n > 0);
    const inProcess = microOf(r, 'paid path: handle + finish, instant facilitator, native');
    const worst =
      perFramework.length > 0 ? Math.max(...perFramework.map((x) => x.c!.extraCpuUs!.median)) : Number.NaN;
    const figure = [
      ...perFramework.map((x) => `${x.name} ${µs(x.c!.extraCpuUs)}`),
      inProcess ? `in process (gate alone) ${µs(inProcess.cpuUs)}` : '',
    ]
      .filter(Boolean)
      .join('; ');
    const measured = perFramework.length > 0 || inProcess !== undefined;
    const value = Number.isFinite(worst) ? worst : (inProcess?.cpuUs.median ?? Number.NaN);
    const ok = value <= 150;
    const piece = (name: string) => fmt(microOf(r, name)?.cpuUs.median ?? Number.NaN, 0);
    const reach = ok
      ? ''
      : 'What would reach it: recovery is a fixed third of the budget or more on this machine, the rest needs fewer allocations per payment (the GC share), fewer ledger operations per paid request (claim and three compare-and-set updates, each copying the entry in the memory store).';
    rows.push({
      target:
        'Paid path ≤ 150 µs CPU per request at the median (excluding facilitator time, including local signature recovery)',
      figure: figure || 'n/a',
      verdict: measured ? (ok ? 'met' : 'missed') : 'not measured',
      ...(measured
        ? {
            why: `Judged on the worst framework: the server's CPU per paid request minus its CPU per bare hello (same framework, same round), so what HTTP costs anyway cancels out; it still includes parsing a 1 KB request header, writing the receipt header and all garbage collection, part of which runs on V8's helper threads. In process, the gate alone costs ${fmt(inProcess?.cpuUs.median ?? Number.NaN, 0)} µs; over HTTP the adapter also buffers the handler's response and writes a bigger one, and the same code runs between socket reads and the framework's work, with autocannon on the other CPU. Where the gate's time goes (section 3): native signature recovery ${piece('recoverSignerAddress, native')} µs (libsecp256k1; @noble/curves would be ${piece('recoverSignerAddress, noble')} µs), the EIP-712 digest ${piece('EIP-712 digest')} µs, header decode + schema ${piece('decodePaymentHeader')} µs (the hand-written check ${piece('schema check (hand-written')} µs, zod's ${piece('schema check (zod')} µs, which now only words a bad payload's error), ledger claim + 3 state changes ${piece('memory store: claim')} µs. ${profiled(r)}${reach}`.trimEnd(),
          }
        : {}),
    });
  }
  for (const [key, name] of frameworks) {
    ratioTarget(`${key}/replay`, `Idempotent replay ≥ 90 % of bare (${name})`, 0.9, (c) => {
      const bytes = findCase(r.http, `${key}/bytesreplay`);
      const gateShare = roundCpuRatio(c, bytes);
      const floor = bytes?.cpuRatio
        ? ` The same response written by a bare handler to a request carrying the same payment header, with no gate at all (the "bare handler writing a replay's bytes" row), reads ${fmtRatio(bytes.cpuRatio)} of bare hello in this run: the framework's price of the bigger request and response, a floor no gate can go below${bytes.cpuRatio.median < 0.9 ? ', and below the target' : ''}; against that row the gate's replay reads ${gateShare ? fmtRatio(gateShare) : 'n/a'}.`
        : '';
      return `A byte-identical replay is answered from the ledger without decoding or recovering the signature again (${fmt(microOf(r, 'idempotent replay')?.cpuUs.median ?? Number.NaN, 1)} µs in process, section 3); the rest is the framework reading a 1 KB payment header and writing the stored response, whose receipt header (~300 bytes of base64) and expose list make it several times hello's size.${floor}`;
    });
  }
  ratioTarget(
    'fee/preview',
    "Fee preview ≥ 90 % of its bare framework's hello (fee service on Fastify 5)",
    0.9,
    () => {
      const alone = roundCpuRatio(findCase(r.http, 'fee/preview'), findCase(r.http, 'fee/bare'));
      return `The preview is served from bytes kept per snapshot reading (createPreviewResponder), written with the head in one piece; the service matches the route once per request for its edge, the gate and the metrics, and counts metrics in plain maps that prom-client reads on scrape. The same responder alone on bare Fastify runs at ${fmtRatio(findCase(r.http, 'fee/bare')?.cpuRatio ?? spread([]))} of bare hello, and the whole service at ${alone ? fmtRatio(alone) : 'n/a'} of that responder alone: the rest is the service's own hooks (rate limiting, request ids, metrics, the precondition check; about 3 µs of JavaScript per request in a profile) and the larger response. The ranges show how far one run moves: a few points cannot be resolved on this machine.`;
    },
  );
  // Devnet.
  {
    const ours = r.devnet?.runs.find((x) => x.facilitator.startsWith('Tollbooth'));
    const official = r.devnet?.runs.find((x) => x.facilitator.startsWith('official'));
    const ok = ours && ours.perSecond >= 100 && ours.balancesOk;
    rows.push({
      target: 'Devnet settlement ≥ 100 paid requests/s with one facilitator account',
      figure: ours
        ? `${fmt(ours.perSecond, 1)}/s (official facilitator: ${official ? `${fmt(official.perSecond, 1)}/s${official.failed > 0 ? `, ${official.failed} of ${official.payments} payments failed` : ''}` : 'n/a'})${ours.failed > 0 ? `; ${ours.failed} of ${ours.payments} payments failed` : ''}`
        : 'n/a',
      verdict: ours ? (ok ? 'met' : 'missed') : 'not measured',
      ...(ours
        ? {
            why: `${r.devnet!.payers} concurrent payers, each paying one payment after another: the rate is concurrency ÷ latency (p50 ${fmt(ours.p50Ms, 0)} ms), on ${r.machine.cpus} CPUs shared by anvil, the app with its facilitator and the payers. ${ours.rpcCallsPerPayment !== undefined ? `Tollbooth's facilitator made ${fmt(ours.rpcCallsPerPayment, 1)} JSON-RPC calls per payment in this run (start-up included): the simulation in verify, the transaction and its receipt, batched per round. ` : ''}Settlements from its one account go through one sender: nonces from a local counter, each round of transactions broadcast in nonce order as one JSON-RPC batch, one receipt poller per chain for every pending transaction, one gas estimate per asset with headroom, fees reused for a second, and settle reuses the simulation its own verify ran less than 3 s before. The official facilitator estimates, signs, sends and polls each transaction on its own (viem's nonce manager, 50 ms receipt polling). Anvil mines one block per transaction (automine).${ok ? '' : ' What would reach 100/s here: the run is bound by the machine (the load average column of the machine section says how busy it was); the ratio to the official facilitator is what carries over.'}`,
          }
        : {}),
    });
  }
  rows.push(latencyTarget(r.latency));
  rows.push(observatoryTarget(r.observatory));
  rows.push(aiTarget(r.ai));
  rows.push(...chainTargets(r.chain));
  return rows;
}

/**
 * What the windowed profile of Fastify's paid run says of the HTTP figure, per request: the
 * recovery, the socket write (compared with the same call on the 402 run) and garbage collection.
 */
function profiled(r: BenchReport): string {
  const paid = r.profile?.cases.find((p) => p.id === 'fastify/paid');
  if (!paid) return '';
  const per = (p: ProfiledCase | undefined, names: readonly string[]) =>
    p ? p.frames.filter((f) => names.includes(f.name)).reduce((sum, f) => sum + f.selfUs, 0) / p.requests : 0;
  const challenge = r.profile?.cases.find((p) => p.id === 'fastify/402');
  const writes = ['writev', 'writevGeneric', 'writeUtf8String', 'writeLatin1String', 'writeBuffer'];
  const recovery = per(paid, ['ecdsaRecover']);
  const write = per(paid, writes);
  const gc = per(paid, ['(garbage collector)']);
  const tight = microOf(r, 'recoverSignerAddress, native')?.cpuUs.median;
  return `The windowed profile of Fastify's paid run (section 6) shows where the HTTP figure goes beyond the gate's: of ${fmt(paid.cpuUsPerRequest, 0)} µs of server CPU per paid request, libsecp256k1's \`ecdsaRecover\` takes ${fmt(recovery, 0)} µs${tight === undefined ? '' : ` (the whole recovery takes ${fmt(tight, 0)} µs in section 3's tight loop, where its precomputed tables stay in the CPU caches)`}, the socket write ${fmt(write, 0)} µs of sampled time${challenge ? ` (${fmt(per(challenge, writes), 0)} µs per 402 at ${fmt(challenge.rps, 0)} req/s)` : ''}, garbage collection ${fmt(gc, 0)} µs on the main thread, and at least ${fmt(paid.cpuUsPerRequest - paid.mainUsPerRequest, 0)} µs ran outside the main thread's samples (V8's helper threads: concurrent marking and parallel scavenges of a heap that keeps every payment's ledger entry). The profiler's times are wall-clock gaps between samples, not CPU: on loopback a write wakes autocannon, and with V8's helper threads also wanting the two CPUs the kernel often switches away from the server inside that call, so the write's share is partly time the server waited. `;
}
