// Section 2: end-to-end paid throughput on the devnet (anvil + a real EIP-3009 token). Concurrent
// payers pay one Tollbooth route; settled by Tollbooth's in-process facilitator and, in the same
// run, by the official facilitator served over HTTP. Payments are signed before each run (a
// client's signing is not the server's throughput); balances are checked afterwards.
import { decodeHeaderJson, encodeHeader, type PaymentRequired, type SettleResponse } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { createPaymentPayload } from '@tollbooth/evm';
import { type Hex, parseAbiItem } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { BenchConfig } from './lib/config';
import { PAID_PATH } from './lib/fixtures';
import { type ServerProcess, spawnServer } from './lib/server-process';
import { percentile } from './lib/stats';

const PRICE_ATOMIC = 1000n;
/** One paid request may take this long (a settlement waits for its block). */
const REQUEST_TIMEOUT_MS = 60_000;
/**
 * A whole run ends by this time: a facilitator that stops settling (seen with the official one: a
 * nonce its sender used but never broadcast leaves every later transaction queued behind the gap)
 * must not hang the benchmark; payments not sent by then count as failed.
 */
const RUN_DEADLINE_MS = 180_000;

export interface DevnetRun {
  facilitator: string;
  payments: number;
  ok: number;
  failed: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Distinct transaction hashes in the receipts. */
  transactions: number;
  paidDelta: bigint;
  receivedDelta: bigint;
  /**
   * The chain moved exactly what the 200s say: the payers lost and the recipient got the price of
   * each settled payment, with one transfer (AuthorizationUsed) each, and nothing more.
   */
  balancesOk: boolean;
  problems: string[];
  /** JSON-RPC calls per payment made by the facilitator (whole run, start-up included). */
  rpcCallsPerPayment?: number;
  /** The same calls by method, per payment. */
  rpcCallsByMethod?: Record<string, number>;
  /** HTTP requests to the node per payment (a batch carries several calls). */
  rpcHttpRequestsPerPayment?: number;
}

export interface DevnetSectionResult {
  payers: number;
  paymentsPerPayer: number;
  runs: DevnetRun[];
  notes: string[];
}

export async function runDevnetSection(
  config: BenchConfig,
  log: (line: string) => void,
  servers: ServerProcess[],
): Promise<DevnetSectionResult> {
  const notes: string[] = [];
  const runs: DevnetRun[] = [];
  let devnet: Devnet;
  try {
    devnet = await startDevnet({ chainId: 8453, payers: config.payers, payerBalance: 1_000_000_000n });
  } catch (error) {
    notes.push(`the devnet did not start (${(error as Error).message}); section skipped.`);
    return { payers: config.payers, paymentsPerPayer: config.paymentsPerPayer, runs, notes };
  }
  try {
    const common = {
      DEVNET_RPC_URL: devnet.rpcUrl,
      DEVNET_CHAIN_ID: String(devnet.chainId),
      PAY_TO: devnet.accounts.payTo.address,
      PRICE_ATOMIC: PRICE_ATOMIC.toString(),
      TOKEN: devnet.token.address,
      TOKEN_NAME: devnet.token.name,
      TOKEN_VERSION: devnet.token.version,
    };
    // Tollbooth's in-process facilitator settles from the devnet's facilitator account, the official
    // one from the deployer's: they never share an account nonce.
    const ours = await spawnServer('devnet-app-in-process', 'devnet-app', {
      env: { ...common, FACILITATOR: 'in-process', FACILITATOR_KEY: devnet.accounts.facilitator.privateKey },
    });
    servers.push(ours);
    runs.push(await payRun('Tollbooth in-process EVM facilitator', ours, ours, devnet, config, log));

    const official = await spawnServer('official-facilitator', 'official-facilitator', {
      env: { ...common, FACILITATOR_KEY: devnet.accounts.deployer.privateKey },
    });
    servers.push(official);
    const viaHttp = await spawnServer('devnet-app-official', 'devnet-app', {
      env: { ...common, FACILITATOR: official.url },
    });
    servers.push(viaHttp);
    runs.push(
      await payRun(
        'official x402Facilitator over HTTP (createHttpFacilitatorClient)',
        viaHttp,
        official,
        devnet,
        config,
        log,
      ),
    );
  } finally {
    await devnet.stop();
  }
  return { payers: config.payers, paymentsPerPayer: config.paymentsPerPayer, runs, notes };
}

async function payRun(
  facilitator: string,
  app: ServerProcess,
  /** The process whose JSON-RPC calls are the facilitator's (it prints RPC_CALLS). */
  settler: ServerProcess,
  devnet: Devnet,
  config: BenchConfig,
  log: (line: string) => void,
): Promise<DevnetRun> {
  const url = `${app.url}${PAID_PATH}`;
  const problems: string[] = [];
  const challengeResponse = await fetch(url);
  await challengeResponse.arrayBuffer();
  const paymentRequired = decodeHeaderJson(
    challengeResponse.headers.get('payment-required') ?? '',
  ) as PaymentRequired;
  const payers = devnet.accounts.payers
    .slice(0, config.payers)
    .map((p) => privateKeyToAccount(p.privateKey as Hex));
  const headers: string[][] = [];
  for (const account of payers) {
    const mine: string[] = [];
    for (let i = 0; i < config.paymentsPerPayer; i++)
      mine.push(encodeHeader(await createPaymentPayload({ paymentRequired, account })));
    headers.push(mine);
  }
  const payTo = devnet.accounts.payTo.address;
  const before = await Promise.all(payers.map((p) => devnet.balanceOf(p.address)));
  const payToBefore = await devnet.balanceOf(payTo);
  const fromBlock = await devnet.publicClient.getBlockNumber({ cacheTime: 0 });

  const latencies: number[] = [];
  const transactions = new Set<string>();
  let ok = 0;
  let failed = 0;
  let notSent = 0;
  const deadline = AbortSignal.timeout(RUN_DEADLINE_MS);
  const started = performance.now();
  await Promise.all(
    headers.map(async (mine) => {
      for (const header of mine) {
        if (deadline.aborted) {
          notSent++;
          failed++;
          continue;
        }
        const t0 = performance.now();
        try {
          const response = await fetch(url, {
            headers: { 'payment-signature': header },
            signal: AbortSignal.any([deadline, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]),
          });
          await response.arrayBuffer();
          latencies.push(performance.now() - t0);
          const receipt = response.headers.get('payment-response');
          if (response.status === 200 && receipt) {
            ok++;
            transactions.add((decodeHeaderJson(receipt) as SettleResponse).transaction);
          } else {
            failed++;
            if (problems.length < 5) problems.push(`status ${response.status}`);
          }
        } catch (error) {
          failed++;
          if (problems.length < 5) problems.push((error as Error).message);
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;

  const after = await Promise.all(payers.map((p) => devnet.balanceOf(p.address)));
  const payToAfter = await devnet.balanceOf(payTo);
  const paidDelta = before.reduce((sum, b, i) => sum + (b - after[i]!), 0n);
  const receivedDelta = payToAfter - payToBefore;
  const logs = await devnet.publicClient.getLogs({
    address: devnet.token.address,
    event: parseAbiItem('event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)'),
    fromBlock: fromBlock + 1n,
  });
  const payments = config.payers * config.paymentsPerPayer;
  const settledWorth = PRICE_ATOMIC * BigInt(ok);
  const balancesOk =
    paidDelta === settledWorth &&
    receivedDelta === settledWorth &&
    logs.length === ok &&
    transactions.size === ok;
  if (!balancesOk)
    problems.push(
      `balances: paid ${paidDelta}, received ${receivedDelta}, ${logs.length} AuthorizationUsed events, ${transactions.size} transactions for ${ok} settled payments`,
    );
  if (notSent > 0)
    problems.push(`${notSent} payments not sent: the run's ${RUN_DEADLINE_MS / 1000} s deadline passed`);
  const run: DevnetRun = {
    facilitator,
    payments,
    ok,
    failed,
    seconds,
    perSecond: ok / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    transactions: transactions.size,
    paidDelta,
    receivedDelta,
    balancesOk,
    problems,
  };
  log(
    `  ${facilitator}: ${ok}/${payments} settled in ${seconds.toFixed(1)} s = ${run.perSecond.toFixed(1)}/s, p50 ${run.p50Ms.toFixed(0)} ms, p99 ${run.p99Ms.toFixed(0)} ms, balances ${balancesOk ? 'ok' : 'WRONG'}`,
  );
  await new Promise((r) => setTimeout(r, 300));
  const counted = settler.info['RPC_CALLS'];
  if (counted && !counted.includes('"calls":{}')) {
    const { httpRequests, calls } = JSON.parse(counted) as {
      httpRequests: number;
      calls: Record<string, number>;
    };
    const total = Object.values(calls).reduce((a, b) => a + b, 0);
    const each = Object.entries(calls)
      .map(([method, n]) => `${method} ${(n / payments).toFixed(2)}`)
      .join(', ');
    run.rpcCallsPerPayment = total / payments;
    run.rpcHttpRequestsPerPayment = httpRequests / payments;
    run.rpcCallsByMethod = Object.fromEntries(Object.entries(calls).map(([m, n]) => [m, n / payments]));
    log(
      `    JSON-RPC per payment: ${(total / payments).toFixed(2)} calls in ${(httpRequests / payments).toFixed(2)} HTTP requests (${each}; whole run, start-up included)`,
    );
  }
  return run;
}
