// tollbooth-conformance faults <url> --paid <path>: a server whose facilitator URL points at the
// kit's fault proxy, judged on what each facilitator fault does to one payment.
import { parseArgs } from 'node:util';
import type { AuditChain } from '../facilitator/chain';
import { createAuditChain } from '../facilitator/chain';
import { FAULT_AUDITS } from '../faults/audits';
import type { FaultKit } from '../faults/kit';
import { runFaultAudits } from '../faults/run';
import { payableRequirement } from '../faults/server-payment';
import { decodeHeader, send, TargetUnreachable } from '../http';
import { createHumanPrinter, summaryLine } from '../report/human';
import { renderJunit } from '../report/junit';
import { type AuditResult, exitCodeOf, summarize } from '../results';
import type { AuditProfile, ReplayMode } from '../types';
import type { AuditedProcess } from './audited-process';
import { type CliIo, parseCommand, secondsOption, UsageError } from './io';
import { startKit, startServerUnderAudit, waitForServer } from './server-under-audit';

export const FAULTS_USAGE = `Usage: tollbooth-conformance faults <url> --paid <path> [options]

Audits what a running x402 server does when its facilitator fails: the kit starts a devnet, an
honest facilitator settling on it and a fault proxy in front; the server's facilitator URL points
at the proxy. For each fault (verify times out, settle answer lost after the transfer, settle
answers 500 or a hash that never mines, slow /supported, garbage JSON, connection reset, frozen)
the kit pays once while the fault plays, then retries the exact payload with the facilitator
healthy, and reads on chain what the payer was charged.

  --paid <path>           a paid route whose payments settle on the kit's chain (required)
  --exec <command>        start the server once the kit is up; it finds TOLLBOOTH_FACILITATOR_URL,
                          TOLLBOOTH_RPC_URL, TOLLBOOTH_CHAIN_ID, TOLLBOOTH_NETWORK, TOLLBOOTH_TOKEN
                          and TOLLBOOTH_PAY_TO in its environment and is stopped when the run ends
  --devnet-port <port>    RPC port of the devnet (default: a free port)
  --proxy-port <port>     port of the fault proxy, the server's facilitator URL (default: free)
  --chain-id <id>         devnet chain id (default 8453)
  --token <kind>          tollbooth or circle
  --facilitator <url>     an honest facilitator of your own on the devnet (default: Tollbooth's)
  --profile <name>        tollbooth (default): every fault audit; x402: only the paid flow
  --replay <mode>         the server's replay mode: stored-answer (default) or strict
                          (docs/ledger.md#replay-a-stance); the other mode's replay audit is skipped
  --wait <s>              how long to wait for the paid route to offer exact on the chain (default 30)
  --recovery <s>          how long the server may take to serve the retried payload (default 30)
  --timeout <s>           limit of one request to the server (default 60)
  --json, --junit <file>  as for the other commands

Exit status: 0 every MUST rule is kept; 1 a MUST rule is broken; 2 a usage error, an unreachable
server, or a MUST rule that could not be judged.`;

function parse(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      paid: { type: 'string' },
      exec: { type: 'string' },
      'devnet-port': { type: 'string' },
      'proxy-port': { type: 'string' },
      'chain-id': { type: 'string' },
      token: { type: 'string' },
      facilitator: { type: 'string' },
      profile: { type: 'string' },
      replay: { type: 'string' },
      wait: { type: 'string' },
      recovery: { type: 'string' },
      timeout: { type: 'string' },
      json: { type: 'boolean' },
      junit: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return { help: true as const };
  const url = positionals[0];
  const problems: string[] = [];
  if (positionals.length !== 1 || !url || !/^https?:\/\/[^/]/.test(url))
    problems.push('one http(s) URL of the server is required');
  if (!values.paid?.startsWith('/')) problems.push('--paid /path is required');
  const port = (value: string | undefined, name: string) => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1 || n > 65_535) problems.push(`${name} must be a port number`);
    return n;
  };
  const chainId = values['chain-id'] === undefined ? undefined : Number(values['chain-id']);
  if (chainId !== undefined && (!Number.isSafeInteger(chainId) || chainId < 1))
    problems.push('--chain-id must be a positive integer');
  if (values.token !== undefined && values.token !== 'tollbooth' && values.token !== 'circle')
    problems.push('--token is tollbooth or circle');
  const profile = values.profile ?? 'tollbooth';
  if (profile !== 'x402' && profile !== 'tollbooth') problems.push('--profile is x402 or tollbooth');
  const replay = values.replay ?? 'stored-answer';
  if (replay !== 'stored-answer' && replay !== 'strict') problems.push('--replay is stored-answer or strict');
  const parsed = {
    help: false as const,
    url: url ? new URL(url).origin : '',
    paid: values.paid ?? '/',
    exec: values.exec,
    kit: {
      devnetPort: port(values['devnet-port'], '--devnet-port'),
      proxyPort: port(values['proxy-port'], '--proxy-port'),
      chainId,
      token: values.token as 'tollbooth' | 'circle' | undefined,
      facilitatorUrl: values.facilitator,
    },
    profile: profile as AuditProfile,
    replay: replay as ReplayMode,
    waitMs: secondsOption(values.wait, '--wait', 30),
    recoveryMs: secondsOption(values.recovery, '--recovery', 30),
    timeoutMs: secondsOption(values.timeout, '--timeout', 60),
    json: values.json === true,
    junit: values.junit,
  };
  if (problems.length > 0) throw new UsageError(problems.join('\n'));
  return parsed;
}

type Options = Exclude<ReturnType<typeof parse>, { help: true }>;

/** Waits until the paid route challenges with an exact payment on the kit's chain. */
function waitUntilReady(
  options: Options,
  chain: AuditChain,
  child: AuditedProcess | undefined,
): Promise<void> {
  const ctx = { baseUrl: options.url, fetch, paths: { paid: options.paid } };
  return waitForServer(`${options.url}${options.paid}`, options.waitMs, child, async () => {
    const answer = await send(ctx, options.paid);
    if (answer.status !== 402)
      throw new UsageError(`unpaid GET ${options.paid} answered ${answer.status}, not 402`);
    payableRequirement(chain, decodeHeader(answer, 'payment-required'));
  });
}

export async function faultsCommand(argv: string[], io: CliIo): Promise<number> {
  const options = parseCommand(argv, parse, FAULTS_USAGE, io);
  if (typeof options === 'number') return options;
  const say = options.json ? io.err : io.out;
  let kit: FaultKit | undefined;
  let server: AuditedProcess | undefined;
  try {
    kit = await startKit(options.kit);
    const { chain } = kit;
    const network = `eip155:${chain.chainId}`;
    say(`Auditing ${options.url}${options.paid} against facilitator faults`);
    say(`  facilitator URL  ${kit.facilitatorUrl} (the fault proxy; point the server here)`);
    say(`  chain            ${network}, RPC ${chain.rpcUrl} (the server's chain reader)`);
    say(
      `  token            ${chain.token.address} (EIP-712 name "${chain.token.name}", version "${chain.token.version}")`,
    );
    if (options.exec) server = startServerUnderAudit(options.exec, kit, chain, io.err);
    if (options.waitMs > 0)
      say(
        `  waiting          up to ${options.waitMs / 1000} s for ${options.paid} to offer exact on ${network}`,
      );
    await waitUntilReady(options, createAuditChain(chain), server);
    const print = createHumanPrinter(io.out, () => 'Facilitator faults');
    const audits = FAULT_AUDITS.filter((a) => options.profile === 'tollbooth' || a.profile === 'x402');
    const results: AuditResult[] = await runFaultAudits(
      { url: options.url, paidPath: options.paid },
      {
        chain,
        faults: kit.proxy,
        audits,
        recoveryMs: options.recoveryMs,
        replay: options.replay,
        requestTimeoutMs: options.timeoutMs,
        onResult: (result) => {
          if (!options.json) print(result);
        },
      },
    );
    const exitCode = exitCodeOf(results);
    if (options.json) {
      io.out(
        JSON.stringify(
          {
            kind: 'faults',
            target: options.url,
            paidPath: options.paid,
            network,
            results,
            summary: summarize(results),
            exitCode,
          },
          null,
          2,
        ),
      );
    } else {
      io.out('');
      io.out(summaryLine(results));
    }
    if (options.junit)
      io.writeFile(
        options.junit,
        renderJunit('tollbooth-conformance faults', [{ name: 'Facilitator faults', results }]),
      );
    return exitCode;
  } catch (error) {
    if (error instanceof TargetUnreachable || error instanceof UsageError) {
      io.err(`tollbooth-conformance: cannot audit: ${error.message}`);
      return 2;
    }
    throw error;
  } finally {
    await server?.stop();
    await kit?.stop();
  }
}
