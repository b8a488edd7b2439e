// Real processes for the charged ⇒ served fault tests and the soak: the standalone facilitator
// (`tollbooth-facilitator`) and the fee service (`npm start`) as child processes that can be
// SIGKILLed and restarted on the same port, payments signed for the fee service's decision, and
// the chain as the judge (the token's AuthorizationUsed and Transfer logs).
import { type ChildProcess, spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeHeaderJson, encodeHeader, type PaymentRequired } from '@tollbooth/core';
import type { Devnet } from '@tollbooth/devnet';
import { createPaymentPayload } from '@tollbooth/evm';
import type { Address, Hash, Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

const here = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = join(here, '..', '..');
const FACILITATOR_CLI = join(REPO_ROOT, 'packages', 'facilitator', 'src', 'cli.ts');
const FEE_SERVICE_MAIN = join(REPO_ROOT, 'examples', 'fee-service', 'src', 'main.ts');

/** The paid decision every fault is played on (settles before its handler). */
export const DECISION_PATH = '/api/v1/fees/now';
/** Its price, atomic units of the devnet token. */
export const DECISION_PRICE = 1000n;

export type Framework = 'fastify' | 'express' | 'koa';
export const FRAMEWORKS: readonly Framework[] = ['fastify', 'express', 'koa'];

/** A free loopback port chosen by the OS (kept for the restarts of one process). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A child process started by {@link Processes}. */
export interface Proc {
  readonly name: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** The URL it printed once ready. */
  readonly url: string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Everything it wrote (stdout and stderr) so far. */
  output(): string;
  /** Sends SIGKILL and waits for the exit. */
  kill(): Promise<void>;
  /** SIGTERM, SIGKILL after `graceMs`; waits for the exit. */
  stop(graceMs?: number): Promise<void>;
}

function alive(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** Starts and tracks child processes; `killAll` (afterAll) kills each by its PID. */
export class Processes {
  private readonly all = new Set<Proc>();

  async start(
    name: string,
    args: string[],
    env: Record<string, string>,
    ready: RegExp,
    timeoutMs = 180_000,
  ): Promise<Proc> {
    const child = spawn(process.execPath, ['--conditions=tollbooth-source', '--import', 'tsx', ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
    });
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (alive(child)) child.kill('SIGKILL');
        reject(new Error(`${name} did not start in ${timeoutMs} ms:\n${out}`));
      }, timeoutMs);
      let started = false;
      const onData = (chunk: Buffer) => {
        out += chunk.toString('utf8');
        // Searched only until it is ready (a long run's log is kept, not searched again).
        if (started) return;
        const match = ready.exec(out);
        if (match) {
          started = true;
          clearTimeout(timer);
          resolve(match[1]!);
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      void exited.then(({ code, signal }) => {
        clearTimeout(timer);
        reject(new Error(`${name} exited (${code ?? signal}) before it was ready:\n${out}`));
      });
    });
    const proc: Proc = {
      name,
      pid: child.pid!,
      child,
      url,
      exited,
      output: () => out,
      kill: async () => {
        if (alive(child)) process.kill(child.pid!, 'SIGKILL');
        await exited;
      },
      stop: async (graceMs = 5_000) => {
        if (!alive(child)) return;
        process.kill(child.pid!, 'SIGTERM');
        const timer = setTimeout(() => {
          if (alive(child)) process.kill(child.pid!, 'SIGKILL');
        }, graceMs);
        await exited;
        clearTimeout(timer);
      },
    };
    this.all.add(proc);
    void exited.then(() => this.all.delete(proc));
    return proc;
  }

  async killAll(): Promise<void> {
    await Promise.all([...this.all].map((proc) => proc.kill()));
  }
}

/** The standalone facilitator (`tollbooth-facilitator`) settling on the devnet, on `port` (0: any). */
export function startFacilitatorProcess(procs: Processes, devnet: Devnet, port = 0): Promise<Proc> {
  return procs.start(
    'tollbooth-facilitator',
    [
      FACILITATOR_CLI,
      '--rpc-url',
      devnet.rpcUrl,
      '--chain-id',
      String(devnet.chainId),
      '--port',
      String(port),
    ],
    { TOLLBOOTH_FACILITATOR_KEY: devnet.accounts.facilitator.privateKey },
    /tollbooth-facilitator: (http:\/\/[^\s]+) /,
  );
}

export interface FeeServiceProcessOptions {
  framework: Framework;
  ledgerUrl: string;
  /** The fault proxy's URL. */
  facilitatorUrl: string;
  /** Fixed, so that a restarted process serves the same resource URLs. */
  port: number;
  /** Settle timeout of the facilitator client, ms. */
  settleTimeoutMs?: number;
  env?: Record<string, string>;
}

/**
 * The fee service (`examples/fee-service/src/main.ts`, what `npm start` runs) in the production
 * shape: an external facilitator by URL, a chain reader by RPC_URL, the ledger by LEDGER_URL.
 * Rate limits and the observatory are off (they are not what is under test).
 */
export function startFeeServiceProcess(
  procs: Processes,
  devnet: Devnet,
  options: FeeServiceProcessOptions,
): Promise<Proc> {
  return procs.start(
    `fee-service (${options.framework})`,
    [FEE_SERVICE_MAIN],
    {
      PORT: String(options.port),
      HOST: '127.0.0.1',
      FRAMEWORK: options.framework,
      PROFILE: 'local',
      FACILITATOR_URL: options.facilitatorUrl,
      FACILITATOR_TIMEOUT_MS: '5000',
      FACILITATOR_SETTLE_TIMEOUT_MS: String(options.settleTimeoutMs ?? 5_000),
      RPC_URL: devnet.rpcUrl,
      PAY_TO: devnet.accounts.payTo.address,
      NETWORK: `eip155:${devnet.chainId}`,
      ASSET: devnet.token.address,
      ASSET_NAME: devnet.token.name,
      ASSET_VERSION: devnet.token.version,
      LEDGER_URL: options.ledgerUrl,
      RATE_LIMIT_ENABLED: 'false',
      OBSERVATORY_ENABLED: 'false',
      SIMULATOR_HISTORY_HOURS: '0',
      SHUTDOWN_TIMEOUT_MS: '2000',
      // info: the `fee service listening` JSON line (the only ready signal off a terminal).
      LOG_LEVEL: 'info',
      ...options.env,
    },
    /^(?=.*"msg":"fee service listening").*"url":"(http:\/\/[^"]+)"/m,
  );
}

// -- payments ------------------------------------------------------------------------------

/** One signed payment for the decision. */
export interface Payment {
  payer: Address;
  nonce: Hex;
  /** The PAYMENT-SIGNATURE value, retried byte for byte. */
  header: string;
}

/** The decision's 402 challenge (asked once; every payment is signed against it). */
export async function decisionChallenge(serviceUrl: string): Promise<PaymentRequired> {
  const response = await fetch(`${serviceUrl}${DECISION_PATH}`);
  if (response.status !== 402) throw new Error(`expected 402 from the decision, got ${response.status}`);
  const header = response.headers.get('payment-required');
  if (!header) throw new Error('no PAYMENT-REQUIRED header');
  return decodeHeaderJson(header) as PaymentRequired;
}

/** Signs a payment (a fresh random EIP-3009 nonce) for the challenge. */
export async function signPayment(challenge: PaymentRequired, payerKey: Hex): Promise<Payment> {
  const account = privateKeyToAccount(payerKey);
  const payload = await createPaymentPayload({ paymentRequired: challenge, account });
  const authorization = (payload.payload as { authorization: { from: Address; nonce: Hex } }).authorization;
  return { payer: account.address, nonce: authorization.nonce, header: encodeHeader(payload) };
}

/** A response read whole. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends the payment once (a fresh connection; `agent: false`). Rejects when the connection dies. */
export function sendPayment(serviceUrl: string, payment: Payment, timeoutMs = 60_000): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${serviceUrl}${DECISION_PATH}`,
      { agent: false, headers: { 'payment-signature': payment.header }, timeout: timeoutMs },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers as Record<string, string>,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/** The error code and retryability of a refusal body. */
export function refusalOf(answer: Answer): { code: string | undefined; retryable: boolean | undefined } {
  try {
    const json = JSON.parse(answer.body) as {
      error?: string | { code?: string; retryable?: boolean };
    };
    if (typeof json.error === 'string') return { code: json.error, retryable: undefined };
    return { code: json.error?.code, retryable: json.error?.retryable };
  } catch {
    return { code: undefined, retryable: undefined };
  }
}

/** The transaction a 200 decision names (body `meta.payment.transaction_hash`) and its receipt header's. */
export function servedTransaction(answer: Answer): { body: string | undefined; receipt: string | undefined } {
  let body: string | undefined;
  try {
    body = (JSON.parse(answer.body) as { meta?: { payment?: { transaction_hash?: string } } }).meta?.payment
      ?.transaction_hash;
  } catch {
    body = undefined;
  }
  const header = answer.headers['payment-response'];
  const receipt = header ? (decodeHeaderJson(header) as { transaction?: string }).transaction : undefined;
  return { body, receipt };
}

export interface RetryOutcome {
  answer: Answer | undefined;
  /** Every non-200 status (or `reset`) seen before the 200, in order. */
  seen: string[];
  /** Wall time from the first retry to the 200 (or to giving up), ms. */
  elapsedMs: number;
  /** Epoch ms of the last answer. */
  finishedAt: number;
}

/**
 * Retries the exact payload until it is answered 200, a refusal that is not retryable, or
 * `boundMs` has passed (the bound the tests assert, not a wait). Pauses `pauseMs` between tries.
 */
export async function retryUntilServed(
  serviceUrl: string,
  payment: Payment,
  boundMs = 60_000,
  pauseMs = 200,
): Promise<RetryOutcome> {
  const started = Date.now();
  const seen: string[] = [];
  const done = (answer: Answer | undefined): RetryOutcome => {
    const finishedAt = Date.now();
    return { answer, seen, elapsedMs: finishedAt - started, finishedAt };
  };
  for (;;) {
    let answer: Answer | undefined;
    try {
      answer = await sendPayment(serviceUrl, payment, Math.max(1_000, boundMs - (Date.now() - started)));
    } catch {
      seen.push('reset');
    }
    if (answer?.status === 200) return done(answer);
    if (answer) {
      const refusal = refusalOf(answer);
      seen.push(`${answer.status} ${refusal.code ?? ''}`.trim());
      if (refusal.retryable === false || answer.status === 402 || answer.status === 400) return done(answer);
    }
    if (Date.now() - started >= boundMs) return done(answer);
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
}

// -- the chain ------------------------------------------------------------------------------

/** `payer:nonce` (lower case): one authorization. */
export const authKey = (payer: string, nonce: string) => `${payer.toLowerCase()}:${nonce.toLowerCase()}`;

export interface ChainCharges {
  /** AuthorizationUsed by `payer:nonce`: the transactions that used it (more than one would be a double use). */
  used: Map<string, Hash[]>;
  /** Transfers to payTo after the mark: value and transaction. */
  transfers: { from: Address; value: bigint; transaction: Hash }[];
}

/** What the chain shows after block `mark`: authorizations used and transfers to payTo. */
export async function chargesSince(devnet: Devnet, mark: bigint): Promise<ChainCharges> {
  const fromBlock = mark;
  const [usedLogs, transferLogs] = await Promise.all([
    devnet.publicClient.getContractEvents({
      address: devnet.token.address,
      abi: devnet.token.abi,
      eventName: 'AuthorizationUsed',
      fromBlock,
    }),
    devnet.publicClient.getContractEvents({
      address: devnet.token.address,
      abi: devnet.token.abi,
      eventName: 'Transfer',
      args: { to: devnet.accounts.payTo.address },
      fromBlock,
    }),
  ]);
  const used = new Map<string, Hash[]>();
  for (const log of usedLogs.filter((entry) => entry.blockNumber > mark)) {
    const args = log.args as { authorizer: Address; nonce: Hex };
    const key = authKey(args.authorizer, args.nonce);
    used.set(key, [...(used.get(key) ?? []), log.transactionHash]);
  }
  const transfers = transferLogs
    .filter((entry) => entry.blockNumber > mark)
    .map((log) => {
      const args = log.args as { from: Address; value: bigint };
      return { from: args.from, value: args.value, transaction: log.transactionHash };
    });
  return { used, transfers };
}

/** The chain's height now: a window of {@link chargesSince} starts after it. */
export async function chainMark(devnet: Devnet): Promise<bigint> {
  return devnet.publicClient.getBlockNumber({ cacheTime: 0 });
}

/** Sends a raw HTTP/1.1 request over a socket and reads the whole answer (Connection: close). */
export async function rawRequest(url: string, head: string): Promise<Answer> {
  const { connect } = await import('node:net');
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(head));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0);
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      let body = text.slice(split + 4);
      if (headers['transfer-encoding'] === 'chunked') body = unchunk(body);
      resolve({ status, headers, body });
    });
  });
}

function unchunk(text: string): string {
  let out = '';
  let rest = text;
  for (;;) {
    const line = rest.indexOf('\r\n');
    const size = Number.parseInt(rest.slice(0, line), 16);
    if (!size) return out;
    out += rest.slice(line + 2, line + 2 + size);
    rest = rest.slice(line + 2 + size + 2);
  }
}
