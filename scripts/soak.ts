// `npm run soak` (issue 23, part 7): thousands of real payments through the fee service while
// faults are injected at random — the facilitator's settle answer dropped, the facilitator frozen
// on /settle (its held settlements released late), the facilitator killed and restarted, the
// service SIGKILLed and restarted — then the ledger and the chain must agree exactly: every
// transfer on chain ↔ one settled ledger entry with its stored 200 and the same transaction,
// 0 authorizations used twice, 0 payments charged and never answered 200.
//
// Real processes: anvil with the EIP-3009 token, the standalone `tollbooth-facilitator` behind the
// fault proxy, the fee service (`examples/fee-service/src/main.ts`) with FACILITATOR_URL and
// RPC_URL. Figures are printed as JSON (and written to --report) for docs/reliability.md.
//
//   npm run soak -- [--payments 10000] [--concurrency 12] [--framework fastify] [--ledger sqlite]
//                   [--seed 1] [--fault-every-ms 20000] [--max-minutes M] [--report soak.json]
// --max-minutes stops starting payments after M minutes (the started ones are finished and checked).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { LedgerEntry } from '@tollbooth/core';
import { startDevnet } from '@tollbooth/devnet';
import { startFacilitatorFaultProxy } from '@tollbooth/facilitator';
import { openLedgerStore } from '@tollbooth/ledger-cli';
import pg from 'pg';
import {
  type Answer,
  authKey,
  chainMark,
  chargesSince,
  decisionChallenge,
  FRAMEWORKS,
  type Framework,
  freePort,
  type Payment,
  type Proc,
  Processes,
  refusalOf,
  sendPayment,
  servedTransaction,
  signPayment,
  startFacilitatorProcess,
  startFeeServiceProcess,
} from '../test/support/fault-harness';

const { values } = parseArgs({
  options: {
    payments: { type: 'string', default: '10000' },
    concurrency: { type: 'string', default: '12' },
    framework: { type: 'string', default: 'fastify' },
    ledger: { type: 'string', default: 'sqlite' },
    seed: { type: 'string', default: '1' },
    'fault-every-ms': { type: 'string', default: '20000' },
    'max-minutes': { type: 'string' },
    report: { type: 'string' },
  },
});
const TOTAL = Number(values.payments);
const CONCURRENCY = Number(values.concurrency);
const FRAMEWORK = values.framework as Framework;
const LEDGER = values.ledger as 'sqlite' | 'postgres';
const FAULT_EVERY_MS = Number(values['fault-every-ms']);
/** No new payment is started after this long (the ones started are finished and checked). */
const MAX_MINUTES =
  values['max-minutes'] === undefined ? Number.POSITIVE_INFINITY : Number(values['max-minutes']);
if (!FRAMEWORKS.includes(FRAMEWORK)) throw new Error(`--framework must be one of ${FRAMEWORKS.join(', ')}`);
if (LEDGER !== 'sqlite' && LEDGER !== 'postgres') throw new Error('--ledger must be sqlite or postgres');
if (!(TOTAL > 0 && CONCURRENCY > 0 && FAULT_EVERY_MS > 0 && MAX_MINUTES > 0))
  throw new Error('--payments, --concurrency, --fault-every-ms and --max-minutes must be positive numbers');

/** A payment is retried until 200 (or a final refusal) for this long after it was first sent. */
const PAYMENT_BOUND_MS = 180_000;
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

// mulberry32: the fault schedule is reproducible from --seed.
let seed = Number(values.seed) >>> 0;
function random(): number {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const between = (low: number, high: number) => low + (high - low) * random();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type FaultKind = 'settle-answer-dropped' | 'facilitator-frozen' | 'facilitator-killed' | 'service-killed';
const FAULT_KINDS: readonly FaultKind[] = [
  'settle-answer-dropped',
  'facilitator-frozen',
  'facilitator-killed',
  'service-killed',
];

interface Tracked {
  payment: Payment;
  firstSentAt: number;
  attempts: number;
  final?: Answer;
  /** The last non-200 reason, for the report. */
  lastRefusal?: string;
  servedAt?: number;
}

const procs = new Processes();
const dir = mkdtempSync(join(tmpdir(), 'tollbooth-soak-'));
let database: string | undefined;

async function ledgerUrlFor(kind: 'sqlite' | 'postgres'): Promise<string> {
  if (kind === 'sqlite') return `sqlite:${join(dir, 'ledger.sqlite')}`;
  database = `tollbooth_soak_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${database}"`);
  await admin.end();
  const url = new URL(DATABASE_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function main() {
  const startedAt = Date.now();
  const devnet = await startDevnet({ payers: 16 });
  let facilitator = await startFacilitatorProcess(procs, devnet);
  const facilitatorPort = Number(new URL(facilitator.url).port);
  const proxy = await startFacilitatorFaultProxy({ target: facilitator.url });
  const port = await freePort();
  const ledgerUrl = await ledgerUrlFor(LEDGER);
  // A start that does not finish in time (a loaded machine) is tried again: the soak judges
  // recovery, so the service must come back.
  const startService = async (): Promise<Proc> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await startFeeServiceProcess(procs, devnet, {
          framework: FRAMEWORK,
          ledgerUrl,
          facilitatorUrl: proxy.url,
          port,
          settleTimeoutMs: 5_000,
        });
      } catch (error) {
        if (attempt >= 5) throw error;
        log(`service start ${attempt} failed, again: ${(error as Error).message.split('\n')[0]}`);
      }
    }
  };
  const startFacilitator = async (): Promise<Proc> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await startFacilitatorProcess(procs, devnet, facilitatorPort);
      } catch (error) {
        if (attempt >= 5) throw error;
        log(`facilitator start ${attempt} failed, again: ${(error as Error).message.split('\n')[0]}`);
      }
    }
  };
  let service: Proc = await startService();
  const serviceUrl = service.url;
  const challenge = await decisionChallenge(serviceUrl);
  const mark = await chainMark(devnet);
  const loadStartedAt = Date.now();
  log(`soak: ${TOTAL} payments, ${CONCURRENCY} at a time, ${FRAMEWORK} on ${LEDGER}, seed ${values.seed}`);

  // -- faults ---------------------------------------------------------------------------------
  const faults: Record<FaultKind, number> = {
    'settle-answer-dropped': 0,
    'facilitator-frozen': 0,
    'facilitator-killed': 0,
    'service-killed': 0,
  };
  let injecting = true;
  let done = 0;
  let injectorError: unknown;
  const injector = (async () => {
    while (injecting) {
      await sleep(between(0.5, 1.5) * FAULT_EVERY_MS);
      if (!injecting) break;
      const kind = FAULT_KINDS[Math.floor(random() * FAULT_KINDS.length)]!;
      faults[kind] += 1;
      switch (kind) {
        case 'settle-answer-dropped':
          proxy.setMode('settle-answer-dropped');
          await sleep(between(500, 3_000));
          proxy.setMode('pass');
          break;
        case 'facilitator-frozen':
          // Shorter or longer than the service's 5 s settle timeout; the held settlements are
          // forwarded when it thaws (a late transfer the service may have given up on).
          proxy.setMode({ mode: 'frozen', operations: ['settle'] });
          await sleep(between(1_000, 9_000));
          proxy.setMode('pass');
          break;
        case 'facilitator-killed':
          proxy.setMode({ mode: 'frozen', operations: ['settle'] });
          await sleep(between(500, 3_000));
          await facilitator.kill();
          proxy.setMode('pass');
          await sleep(between(500, 3_000));
          facilitator = await startFacilitator();
          break;
        case 'service-killed':
          await sleep(between(0, 1_000));
          await service.kill();
          service = await startService();
          break;
      }
      log(`fault ${kind} (${Object.values(faults).reduce((a, b) => a + b, 0)} so far), ${done} served`);
    }
  })().catch((error: unknown) => {
    // Recorded and rethrown after the payers stop: a soak that cannot restart a process fails.
    injectorError = error;
    injecting = false;
  });

  // -- payers ---------------------------------------------------------------------------------
  const tracked: Tracked[] = [];
  const statuses: Record<string, number> = {};
  let next = 0;
  const payers = devnet.accounts.payers;
  const stopStartingAt = loadStartedAt + MAX_MINUTES * 60_000;
  async function worker(index: number) {
    while (next < TOTAL && Date.now() < stopStartingAt) {
      const turn = next++;
      const payment = await signPayment(challenge, payers[(turn + index) % payers.length]!.privateKey);
      const entry: Tracked = { payment, firstSentAt: Date.now(), attempts: 0 };
      tracked.push(entry);
      for (;;) {
        entry.attempts += 1;
        let answer: Answer | undefined;
        try {
          answer = await sendPayment(serviceUrl, payment, 60_000);
        } catch {
          answer = undefined;
        }
        const key = answer ? String(answer.status) : 'reset';
        statuses[key] = (statuses[key] ?? 0) + 1;
        if (answer?.status === 200) {
          entry.final = answer;
          entry.servedAt = Date.now();
          break;
        }
        if (answer) {
          const refusal = refusalOf(answer);
          entry.lastRefusal = `${answer.status} ${refusal.code ?? ''}`.trim();
          if (refusal.retryable === false || answer.status === 402 || answer.status === 400) {
            entry.final = answer;
            break;
          }
        } else entry.lastRefusal = 'reset';
        if (Date.now() - entry.firstSentAt > PAYMENT_BOUND_MS) break;
        await sleep(250);
      }
      done += 1;
    }
  }
  const progress = setInterval(() => {
    const seconds = (Date.now() - loadStartedAt) / 1000;
    log(`${done}/${TOTAL} done in ${seconds.toFixed(0)} s (${(done / seconds).toFixed(1)}/s)`);
  }, 30_000);
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, index) => worker(index)));
  clearInterval(progress);
  injecting = false;
  await injector;
  if (injectorError) throw injectorError;
  proxy.setMode('pass');
  const loadSeconds = (Date.now() - loadStartedAt) / 1000;

  // -- agreement ------------------------------------------------------------------------------
  // Let the reconciler finish what it holds, then stop the service and read its ledger.
  await sleep(3_000);
  await service.stop();
  const chain = await chargesSince(devnet, mark);
  const store = await openLedgerStore(ledgerUrl);
  let entries: LedgerEntry[];
  try {
    entries = await store.query({ limit: TOTAL * 2 + 100 });
  } finally {
    await store.close();
  }
  const settled = entries.filter((entry) => entry.state === 'settled');
  const byTransaction = new Map(settled.map((entry) => [entry.transaction?.toLowerCase(), entry]));
  const transferTxs = new Set(chain.transfers.map((t) => t.transaction.toLowerCase()));

  const usedTwice = [...chain.used.values()].filter((hashes) => hashes.length > 1).length;
  const transfersWithoutSettledEntry = chain.transfers.filter(
    (t) => !byTransaction.has(t.transaction.toLowerCase()),
  ).length;
  const settledWithoutTransfer = settled.filter(
    (entry) => !transferTxs.has(String(entry.transaction).toLowerCase()),
  ).length;
  const settledWithout200 = settled.filter((entry) => entry.response?.status !== 200).length;
  const wrongValue = chain.transfers.filter((t) => t.value !== 1000n).length;
  let chargedNeverServed = 0;
  let servedWrongTransaction = 0;
  let servedNotCharged = 0;
  let notCharged = 0;
  const finalRefusals: Record<string, number> = {};
  const serveTimes: number[] = [];
  const attempts: number[] = [];
  for (const entry of tracked) {
    const used = chain.used.get(authKey(entry.payment.payer, entry.payment.nonce));
    attempts.push(entry.attempts);
    if (entry.final?.status === 200) {
      serveTimes.push(entry.servedAt! - entry.firstSentAt);
      const served = servedTransaction(entry.final);
      if (!used) servedNotCharged += 1;
      else if (served.body !== used[0] || served.receipt !== used[0]) servedWrongTransaction += 1;
    } else {
      const reason = entry.final
        ? `${entry.final.status} ${refusalOf(entry.final).code ?? ''}`.trim()
        : `gave up (${entry.lastRefusal})`;
      finalRefusals[reason] = (finalRefusals[reason] ?? 0) + 1;
      if (used) chargedNeverServed += 1;
      else notCharged += 1;
    }
  }
  serveTimes.sort((a, b) => a - b);
  attempts.sort((a, b) => a - b);
  const byState: Record<string, number> = {};
  for (const entry of entries) byState[entry.state] = (byState[entry.state] ?? 0) + 1;
  const proxyStats = proxy.stats();

  const report = {
    command: `npm run soak -- --payments ${TOTAL} --concurrency ${CONCURRENCY} --framework ${FRAMEWORK} --ledger ${LEDGER} --seed ${values.seed} --fault-every-ms ${FAULT_EVERY_MS}${values['max-minutes'] ? ` --max-minutes ${values['max-minutes']}` : ''}`,
    stoppedBy: tracked.length < TOTAL ? 'max-minutes' : 'payments',
    date: new Date().toISOString(),
    durationSeconds: Math.round((Date.now() - startedAt) / 1000),
    loadSeconds: Math.round(loadSeconds),
    payments: tracked.length,
    servedPerSecond: Number((serveTimes.length / loadSeconds).toFixed(1)),
    faults,
    settlesFaultedAtProxy: proxyStats.faulted.settle,
    outcomes: {
      served200: serveTimes.length,
      notServed: tracked.length - serveTimes.length,
      finalRefusals,
      notCharged,
      attemptsPerPayment: {
        p50: percentile(attempts, 50),
        p99: percentile(attempts, 99),
        max: attempts.at(-1),
      },
      msToServed: {
        p50: percentile(serveTimes, 50),
        p99: percentile(serveTimes, 99),
        max: serveTimes.at(-1) ?? 0,
      },
      responsesByStatus: statuses,
    },
    chain: { authorizationsUsed: chain.used.size, transfers: chain.transfers.length },
    ledger: { entries: entries.length, byState },
    agreement: {
      chargedTwice: usedTwice,
      chargedNeverServed,
      servedWrongTransaction,
      servedNotCharged,
      transfersWithoutSettledEntry,
      settledWithoutTransfer,
      settledWithout200,
      transfersOfAnotherAmount: wrongValue,
      transfersEqualAuthorizations: chain.transfers.length === chain.used.size,
    },
  };
  const agree =
    usedTwice === 0 &&
    chargedNeverServed === 0 &&
    servedWrongTransaction === 0 &&
    servedNotCharged === 0 &&
    transfersWithoutSettledEntry === 0 &&
    settledWithoutTransfer === 0 &&
    settledWithout200 === 0 &&
    wrongValue === 0 &&
    chain.transfers.length === chain.used.size &&
    settled.length === chain.transfers.length;
  const text = JSON.stringify({ ...report, ledgerAndChainAgree: agree }, null, 2);
  process.stdout.write(`${text}\n`);
  if (values.report) writeFileSync(values.report, `${text}\n`);
  await proxy.close();
  await procs.killAll();
  await devnet.stop();
  return agree;
}

function log(message: string) {
  process.stderr.write(`[soak ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

async function cleanup() {
  await procs.killAll();
  rmSync(dir, { recursive: true, force: true });
  if (database) {
    const admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin.end();
  }
}

main().then(
  async (agree) => {
    await cleanup();
    process.exit(agree ? 0 : 1);
  },
  async (error: unknown) => {
    console.error(error);
    await cleanup();
    process.exit(2);
  },
);
