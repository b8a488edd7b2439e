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
import type { LedgerEntry } from '@tollbooth/core';
import { startDevnet } from '@tollbooth/devnet';
import { startFacilitatorFaultProxy } from '@tollbooth/facilitator';
import { openLedgerStore } from '@tollbooth/ledger-cli';
import pg from 'pg';
import { chainMark, chargesSince } from '../test/support/fault-chain';
import {
  freePort,
  type Proc,
  Processes,
  startFacilitatorProcess,
  startFeeServiceProcess,
} from '../test/support/fault-harness';
import { decisionChallenge } from '../test/support/fault-payments';
import { judge } from './agreement';
import { startFaultInjector } from './faults';
import { log, readSoakOptions, seededRandom, sleep } from './options';
import { type Payers, pay } from './payers';

const options = readSoakOptions();
const { total: TOTAL, concurrency: CONCURRENCY, framework: FRAMEWORK, ledger: LEDGER } = options;
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

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
  log(`soak: ${TOTAL} payments, ${CONCURRENCY} at a time, ${FRAMEWORK} on ${LEDGER}, seed ${options.seed}`);

  const payers: Payers = { tracked: [], statuses: {}, done: 0 };
  const injector = startFaultInjector({
    proxy,
    everyMs: options.faultEveryMs,
    random: seededRandom(options.seed),
    killFacilitator: () => facilitator.kill(),
    startFacilitator: async () => {
      facilitator = await startFacilitator();
    },
    restartService: async () => {
      await service.kill();
      service = await startService();
    },
    log,
    progress: () => `${payers.done} served`,
  });
  const progress = setInterval(() => {
    const seconds = (Date.now() - loadStartedAt) / 1000;
    log(`${payers.done}/${TOTAL} done in ${seconds.toFixed(0)} s (${(payers.done / seconds).toFixed(1)}/s)`);
  }, 30_000);
  await pay(payers, {
    serviceUrl,
    challenge,
    payers: devnet.accounts.payers,
    total: TOTAL,
    concurrency: CONCURRENCY,
    stopStartingAt: loadStartedAt + options.maxMinutes * 60_000,
  });
  clearInterval(progress);
  await injector.stop();
  proxy.setMode('pass');
  const loadSeconds = (Date.now() - loadStartedAt) / 1000;

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
  const { tracked, statuses } = payers;
  const verdict = judge(tracked, chain, entries);
  const proxyStats = proxy.stats();

  const report = {
    command: `npm run soak -- --payments ${TOTAL} --concurrency ${CONCURRENCY} --framework ${FRAMEWORK} --ledger ${LEDGER} --seed ${options.seed} --fault-every-ms ${options.faultEveryMs}${options.maxMinutesGiven ? ` --max-minutes ${options.maxMinutesGiven}` : ''}`,
    stoppedBy: tracked.length < TOTAL ? 'max-minutes' : 'payments',
    date: new Date().toISOString(),
    durationSeconds: Math.round((Date.now() - startedAt) / 1000),
    loadSeconds: Math.round(loadSeconds),
    payments: tracked.length,
    servedPerSecond: Number((verdict.outcomes.served200 / loadSeconds).toFixed(1)),
    faults: injector.faults,
    settlesFaultedAtProxy: proxyStats.faulted.settle,
    outcomes: { ...verdict.outcomes, responsesByStatus: statuses },
    chain: verdict.chain,
    ledger: verdict.ledger,
    agreement: verdict.agreement,
  };
  const agree = verdict.agree;
  const text = JSON.stringify({ ...report, ledgerAndChainAgree: agree }, null, 2);
  process.stdout.write(`${text}\n`);
  if (options.report) writeFileSync(options.report, `${text}\n`);
  await proxy.close();
  await procs.killAll();
  await devnet.stop();
  return agree;
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
