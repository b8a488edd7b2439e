// Section 10: how long a payer waits for a paid request, facilitator round trips included. Anvil
// mines a block every 2 s (interval mining); the facilitator (Tollbooth's standalone one) sits
// behind a proxy adding a fixed delay each way; Tollbooth on each framework and the official
// @x402/express pay the same route on the same chain through the same facilitator, side by side.
//
// A settlement waits for the next block, so a request's latency is its round trips plus a wait
// that depends on where in the block interval its transaction arrives. Requests are therefore sent
// on a fixed schedule whose period is not a divisor of the block time (M/N of it, M and N coprime):
// over N requests each stack's requests start at N phases spread evenly over the interval, the
// same N for every stack, each further cycle shifted by a fraction of a step, so the medians
// compare round trips and not luck. The rate stays low (about one request a second per stack):
// this measures the wait of one payer, not a queue.
import { decodeHeaderJson, encodeHeader, type PaymentRequired, type SettleResponse } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { createPaymentPayload } from '@tollbooth/evm';
import { type Hex, parseAbiItem } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { BenchConfig } from './lib/config';
import { PAID_PATH } from './lib/fixtures';
import { type ServerProcess, spawnServer } from './lib/server-process';
import { percentile, type Spread, spread } from './lib/stats';

/** The official middleware is the stack every Tollbooth row is compared with. */
export const OFFICIAL_STACK = 'x402';

interface StackDef {
  id: string;
  label: string;
  /** bench/servers/latency-app.ts argument. */
  app: string;
  settle?: 'before-handler';
}

const STACKS: StackDef[] = [
  { id: 'express', label: 'Tollbooth on Express 5 (settles after the handler)', app: 'express' },
  { id: 'fastify', label: 'Tollbooth on Fastify 5 (settles after the handler)', app: 'fastify' },
  { id: 'koa', label: 'Tollbooth on Koa 3 (settles after the handler)', app: 'koa' },
  {
    id: 'express-before',
    label: 'Tollbooth on Express 5, a route that settles before its handler',
    app: 'express',
    settle: 'before-handler',
  },
  { id: OFFICIAL_STACK, label: 'official @x402/express (verify, handler, settle)', app: 'x402' },
];

export interface LatencyStack {
  id: string;
  label: string;
  /** Wall milliseconds from sending the request to the last byte of the answer, per paid request. */
  latenciesMs: number[];
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  ok: number;
  failed: number;
  problems: string[];
  /** Calls that reached the facilitator per paid request, by operation (this stack's own proxy). */
  verifyPerRequest: number;
  settlePerRequest: number;
}

export interface LatencySectionResult {
  delayMs: number;
  blockSeconds: number;
  /** Phases per block interval (requests per stack per cycle), cycles and the period's M (M/N of a block). */
  phases: number;
  cycles: number;
  periodSteps: number;
  periodMs: number;
  /** One `/verify` round trip through the delayed proxy, measured from the runner. */
  roundTripMs: Spread;
  stacks: LatencyStack[];
  /** Payers lost, and the recipient got, the price of every 200, one AuthorizationUsed each. */
  balancesOk: boolean;
  notes: string[];
}

const DELAY_MS = Number(process.env['BENCH_LATENCY_DELAY_MS'] ?? 50);
const BLOCK_SECONDS = Number(process.env['BENCH_LATENCY_BLOCK_SECONDS'] ?? 2);
const PRICE = 1000n;
export const WARMUP_PAYMENTS = 3;

export async function runLatencySection(
  config: BenchConfig,
  log: (line: string) => void,
  servers: ServerProcess[],
): Promise<LatencySectionResult> {
  const phases = config.quick ? 20 : 40;
  const cycles = config.quick ? 1 : 2;
  // About half a block: coprime with 20 and 40, so N requests visit N distinct phases.
  const periodSteps = phases / 2 + 1;
  const stepMs = (BLOCK_SECONDS * 1000) / phases;
  const periodMs = periodSteps * stepMs;
  const notes: string[] = [];
  const result: LatencySectionResult = {
    delayMs: DELAY_MS,
    blockSeconds: BLOCK_SECONDS,
    phases,
    cycles,
    periodSteps,
    periodMs,
    roundTripMs: spread([]),
    stacks: [],
    balancesOk: false,
    notes,
  };
  const perStack = WARMUP_PAYMENTS + phases * cycles;
  let devnet: Devnet;
  try {
    devnet = await startDevnet({ chainId: 8453, payers: 10, payerBalance: 1_000_000_000n });
  } catch (error) {
    notes.push(`the devnet did not start (${(error as Error).message}); section skipped.`);
    return result;
  }
  try {
    await devnet.testClient.setIntervalMining({ interval: BLOCK_SECONDS });
    const common = {
      DEVNET_RPC_URL: devnet.rpcUrl,
      DEVNET_CHAIN_ID: String(devnet.chainId),
      PAY_TO: devnet.accounts.payTo.address,
    };
    const facilitator = await spawnServer('latency-facilitator', 'latency-facilitator', {
      env: {
        ...common,
        FACILITATOR_KEY: devnet.accounts.facilitator.privateKey,
        DELAY_MS: String(DELAY_MS),
        STACKS: [...STACKS.map((s) => s.id), 'probe'].join(','),
      },
      timeoutMs: 120_000,
    });
    servers.push(facilitator);
    const proxyOf = (id: string) => facilitator.info[`PROXY_${id}`]!;
    // One after another: five processes loading their frameworks at once on a busy machine time out.
    const apps: ServerProcess[] = [];
    for (const s of STACKS) {
      const app = await spawnServer(`latency-${s.id}`, 'latency-app', {
        args: [s.app],
        env: { ...common, FACILITATOR_URL: proxyOf(s.id), ...(s.settle ? { SETTLE: s.settle } : {}) },
        timeoutMs: 120_000,
      });
      servers.push(app);
      apps.push(app);
    }

    // Payments signed before the clock starts, each stack from its own challenge.
    const payers = devnet.accounts.payers.map((p) => privateKeyToAccount(p.privateKey as Hex));
    let signer = 0;
    const signed = await Promise.all(
      apps.map(async (app) => {
        const challenge = await fetch(`${app.url}${PAID_PATH}`);
        await challenge.arrayBuffer();
        const paymentRequired = decodeHeaderJson(
          challenge.headers.get('payment-required') ?? '',
        ) as PaymentRequired;
        return { app, paymentRequired };
      }),
    );
    const headers: string[][] = [];
    for (const { paymentRequired } of signed) {
      const mine: string[] = [];
      for (let i = 0; i < perStack; i++)
        mine.push(
          encodeHeader(
            await createPaymentPayload({ paymentRequired, account: payers[signer++ % payers.length]! }),
          ),
        );
      headers.push(mine);
    }
    const probePayload = await createPaymentPayload({
      paymentRequired: signed[0]!.paymentRequired,
      account: payers[0]!,
    });
    log(`  signed ${perStack} payments for each of ${STACKS.length} stacks`);

    // One facilitator round trip as the gate sees it: /verify through a delayed proxy.
    const trips: number[] = [];
    for (let i = 0; i < 15; i++) {
      const t0 = performance.now();
      const response = await fetch(`${proxyOf('probe')}/verify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          x402Version: 2,
          paymentPayload: probePayload,
          paymentRequirements: signed[0]!.paymentRequired.accepts[0],
        }),
      });
      const body = (await response.json()) as { isValid?: boolean };
      if (i > 2) trips.push(performance.now() - t0);
      if (body.isValid !== true) notes.push('the probe payment did not verify; the round trip is a refusal');
    }
    result.roundTripMs = spread(trips);

    const before = await balances(devnet);
    const fromBlock = await devnet.publicClient.getBlockNumber({ cacheTime: 0 });
    // Warm-up: a few payments per stack, one after another (connections, JIT), not counted.
    let warmedUp = 0;
    await Promise.all(
      apps.map(async (app, i) => {
        for (let w = 0; w < WARMUP_PAYMENTS; w++) if ((await pay(app, headers[i]![w]!)) === 'ok') warmedUp++;
      }),
    );
    const calls0 = await Promise.all(STACKS.map((s) => proxyCalls(proxyOf(s.id))));

    const samples = STACKS.map(() => ({
      latencies: [] as number[],
      ok: 0,
      failed: 0,
      problems: [] as string[],
    }));
    const stagger = Math.max(1, Math.floor(periodMs / STACKS.length / stepMs)) * stepMs;
    const started = performance.now() + 200;
    const sends: Promise<void>[] = [];
    for (let n = 0; n < phases * cycles; n++) {
      // Cycle c starts c/cycles of a step later: the cycles fill the gaps of each other's phases.
      const shift = (Math.floor(n / phases) * stepMs) / cycles;
      for (const [i, app] of apps.entries()) {
        const at = started + n * periodMs + shift + i * stagger;
        const header = headers[i]![WARMUP_PAYMENTS + n]!;
        sends.push(
          sleepUntil(at).then(async () => {
            const s = samples[i]!;
            const t0 = performance.now();
            const answer = await pay(app, header);
            if (answer === 'ok') {
              s.ok++;
              s.latencies.push(performance.now() - t0);
            } else {
              s.failed++;
              if (s.problems.length < 5) s.problems.push(answer);
            }
          }),
        );
      }
    }
    log(`  ${phases * cycles} paid requests per stack, one every ${periodMs} ms, ${STACKS.length} stacks`);
    await Promise.all(sends);
    const calls1 = await Promise.all(STACKS.map((s) => proxyCalls(proxyOf(s.id))));

    for (const [i, s] of STACKS.entries()) {
      const sample = samples[i]!;
      const paid = phases * cycles;
      const stack: LatencyStack = {
        id: s.id,
        label: s.label,
        latenciesMs: sample.latencies.map((v) => Math.round(v * 10) / 10),
        p50Ms: percentile(sample.latencies, 50),
        p90Ms: percentile(sample.latencies, 90),
        p99Ms: percentile(sample.latencies, 99),
        ok: sample.ok,
        failed: sample.failed,
        problems: sample.problems,
        verifyPerRequest: (calls1[i]!.verify - calls0[i]!.verify) / paid,
        settlePerRequest: (calls1[i]!.settle - calls0[i]!.settle) / paid,
      };
      result.stacks.push(stack);
      log(
        `  ${s.id}: p50 ${stack.p50Ms.toFixed(0)} ms, p99 ${stack.p99Ms.toFixed(0)} ms, ${stack.ok}/${paid} paid, facilitator calls per request: verify ${stack.verifyPerRequest.toFixed(2)}, settle ${stack.settlePerRequest.toFixed(2)}`,
      );
    }
    result.balancesOk = await balancesMatch(devnet, before, fromBlock, warmedUp, result, notes);
  } finally {
    await devnet.stop();
  }
  return result;
}

/** One paid request: 'ok' for a 200 with a settled receipt, else what went wrong. */
async function pay(app: ServerProcess, header: string): Promise<string> {
  try {
    const response = await fetch(`${app.url}${PAID_PATH}`, {
      headers: { 'payment-signature': header },
      signal: AbortSignal.timeout(60_000),
    });
    await response.arrayBuffer();
    const receipt = response.headers.get('payment-response');
    if (response.status !== 200 || !receipt) return `status ${response.status}`;
    return (decodeHeaderJson(receipt) as SettleResponse).success ? 'ok' : 'receipt says failed';
  } catch (error) {
    return (error as Error).message;
  }
}

async function proxyCalls(proxyUrl: string): Promise<{ verify: number; settle: number }> {
  const response = await fetch(`${proxyUrl}/__fault`);
  const stats = (await response.json()) as { received: { verify: number; settle: number } };
  return stats.received;
}

function sleepUntil(at: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, at - performance.now())));
}

async function balances(devnet: Devnet) {
  const payers = await Promise.all(devnet.accounts.payers.map((p) => devnet.balanceOf(p.address)));
  return {
    payers: payers.reduce((a, b) => a + b, 0n),
    payTo: await devnet.balanceOf(devnet.accounts.payTo.address),
  };
}

/** The chain moved exactly the price of every 200 (warm-up included), one transfer each. */
async function balancesMatch(
  devnet: Devnet,
  before: { payers: bigint; payTo: bigint },
  fromBlock: bigint,
  warmups: number,
  result: LatencySectionResult,
  notes: string[],
): Promise<boolean> {
  // The last settlements' blocks: every 200 was answered after its block, so this is a margin.
  const after = await balances(devnet);
  const paid = result.stacks.reduce((n, s) => n + s.ok, 0) + warmups;
  const logs = await devnet.publicClient.getLogs({
    address: devnet.token.address,
    event: parseAbiItem('event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)'),
    fromBlock: fromBlock + 1n,
  });
  const worth = PRICE * BigInt(paid);
  const ok =
    before.payers - after.payers === worth && after.payTo - before.payTo === worth && logs.length === paid;
  if (!ok)
    notes.push(
      `balances: payers −${before.payers - after.payers}, recipient +${after.payTo - before.payTo}, ${logs.length} AuthorizationUsed events for ${paid} answered 200 (warm-up included)`,
    );
  return ok;
}
