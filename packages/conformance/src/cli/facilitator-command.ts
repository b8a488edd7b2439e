// tollbooth-conformance facilitator <url>: the facilitator audits, on a devnet the kit starts
// (default) or on the vendor's own chain, every outcome read on that chain.
import { parseArgs } from 'node:util';
import { privateKeyToAccount } from 'viem/accounts';
import { coversNetwork } from '../facilitator/audits-supported';
import type { AuditChainConfig } from '../facilitator/chain';
import { type AuditDevnet, startAuditDevnet } from '../facilitator/devnet';
import { createFacilitatorEndpoint, FacilitatorUnreachable } from '../facilitator/endpoint';
import { ChainUnreachable, type FacilitatorAuditReport, runFacilitatorAudits } from '../facilitator/run';
import { createHumanPrinter, summaryLine, timingLines } from '../report/human';
import { renderJunit } from '../report/junit';
import { exitCodeOf, oneLine, summarize } from '../results';
import { type AuditedProcess, startAuditedProcess } from './audited-process';
import { type CliIo, parseCommand, secondsOption, UsageError } from './io';
import { OWN_CHAIN_OPTIONS, ownChain, parseOwnChain } from './own-chain';

export const FACILITATOR_USAGE = `Usage: tollbooth-conformance facilitator <url> [options]

Audits an x402 facilitator's HTTP API (GET /supported, POST /verify, POST /settle), paying real
EIP-3009 authorizations and reading every outcome on chain: balances, AuthorizationUsed and
Transfer events, never the facilitator's word.

The chain (default: a devnet the kit starts — anvil with an EIP-3009 token at the real USDC
address, funded payers, gas for every signer the facilitator lists):
  --devnet-port <port>    RPC port of the devnet on 127.0.0.1 (default: a free port)
  --chain-id <id>         devnet chain id (default 8453)
  --token <kind>          tollbooth (TollboothUSD) or circle (Circle's FiatTokenV2_2)
  --exec <command>        start the facilitator with this shell command once the chain is up;
                          it finds TOLLBOOTH_RPC_URL, TOLLBOOTH_CHAIN_ID, TOLLBOOTH_NETWORK,
                          TOLLBOOTH_TOKEN and TOLLBOOTH_SETTLER_KEY in its environment and is
                          stopped when the run ends

Your own chain instead (a testnet; the payers need the token, the submitter gas):
  --rpc-url <url>         JSON-RPC endpoint the facilitator settles on
  --asset <address>       the EIP-3009 token (its name() and version() give the EIP-712 domain)
  --payer-key <hex>       a private key holding the token (repeatable; the first pays)
  --pay-to <address>      receives the payments
  --submitter-key <hex>   a key with gas to use an authorization behind the facilitator's back
                          (default: such audits settle through the facilitator)
  --amount <atomic>       atomic units per payment (default 1000)

Options:
  --header <name:value>   send this header with every request (repeatable), e.g. authorization
  --wait <s>              how long to wait for GET /supported to list exact on the chain (default 30)
  --timeout <s>           limit of one request (default 60)
  --json                  print the report as JSON instead of the table
  --junit <file>          also write the report as JUnit XML
  -h, --help              this text

Exit status: 0 every MUST rule is kept; 1 a MUST rule is broken; 2 a usage error, an
unreachable facilitator or chain, or a MUST rule that could not be judged.`;

/** The report's sections, by the prefix of the audit ids. */
const SECTIONS: Record<string, string> = {
  FSUP: 'GET /supported',
  FVER: 'POST /verify',
  FSET: 'POST /settle',
  FV1: 'x402 v1 bodies (POST /verify, POST /settle)',
};
const sectionOf = (id: string) => SECTIONS[id.split('-')[0]!] ?? 'other';

function parse(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'devnet-port': { type: 'string' },
      'chain-id': { type: 'string' },
      token: { type: 'string' },
      exec: { type: 'string' },
      ...OWN_CHAIN_OPTIONS,
      header: { type: 'string', multiple: true },
      wait: { type: 'string' },
      timeout: { type: 'string' },
      json: { type: 'boolean' },
      junit: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return { help: true as const };
  const url = positionals[0];
  if (positionals.length !== 1 || !url || !/^https?:\/\/[^/]/.test(url))
    throw new UsageError('one http(s) URL of the facilitator is required');
  const problems: string[] = [];
  const integer = (value: string | undefined, name: string, min: number, max: number) => {
    if (value === undefined) return undefined;
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max)
      problems.push(`${name} must be an integer from ${min} to ${max}`);
    return n;
  };
  const headers: Record<string, string> = {};
  for (const header of values.header ?? []) {
    const at = header.indexOf(':');
    if (at <= 0) problems.push(`--header ${header} is not name:value`);
    else headers[header.slice(0, at).trim().toLowerCase()] = header.slice(at + 1).trim();
  }
  const own = parseOwnChain(values, problems);
  if (own)
    for (const name of ['devnet-port', 'chain-id', 'token', 'exec'] as const)
      if (values[name] !== undefined) problems.push(`--${name} is for the devnet, not with --rpc-url`);
  if (values.token !== undefined && values.token !== 'tollbooth' && values.token !== 'circle')
    problems.push('--token is tollbooth or circle');
  const parsed = {
    help: false as const,
    url: url.replace(/\/+$/, ''),
    devnet: {
      port: integer(values['devnet-port'], '--devnet-port', 1, 65_535),
      chainId: integer(values['chain-id'], '--chain-id', 1, Number.MAX_SAFE_INTEGER),
      token: values.token as 'tollbooth' | 'circle' | undefined,
    },
    exec: values.exec,
    own,
    headers,
    waitMs: secondsOption(values.wait, '--wait', 30),
    timeoutMs: secondsOption(values.timeout, '--timeout', 60),
    json: values.json === true,
    junit: values.junit,
  };
  if (problems.length > 0) throw new UsageError(problems.join('\n'));
  return parsed;
}

type Options = Exclude<ReturnType<typeof parse>, { help: true }>;

/** Waits until /supported lists exact on the network (or the time is up); returns its signers. */
async function waitUntilReady(
  options: Options,
  network: string,
  child: AuditedProcess | undefined,
): Promise<string[]> {
  const endpoint = createFacilitatorEndpoint({
    url: options.url,
    headers: options.headers,
    timeoutMs: 5_000,
  });
  const deadline = Date.now() + options.waitMs;
  let lastError: FacilitatorUnreachable | undefined;
  for (;;) {
    if (child?.exited) {
      throw new FacilitatorUnreachable(
        `the --exec command exited (${child.exited.signal ?? `code ${child.exited.code}`}) before ${options.url}/supported answered`,
      );
    }
    try {
      const answer = await endpoint.supported();
      const body = answer.json as { kinds?: unknown; signers?: unknown } | undefined;
      const kinds = Array.isArray(body?.kinds) ? (body.kinds as Record<string, unknown>[]) : [];
      const ready = kinds.some(
        (k) => k?.['x402Version'] === 2 && k['scheme'] === 'exact' && k['network'] === network,
      );
      if (ready || Date.now() >= deadline) {
        const signers = typeof body?.signers === 'object' && body.signers ? Object.entries(body.signers) : [];
        return signers
          .filter(([pattern]) => coversNetwork(pattern, network))
          .flatMap(([, list]) => (Array.isArray(list) ? list.map(String) : []));
      }
    } catch (error) {
      if (!(error instanceof FacilitatorUnreachable)) throw error;
      lastError = error;
      if (Date.now() >= deadline) throw lastError;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export async function facilitatorCommand(argv: string[], io: CliIo): Promise<number> {
  const options = parseCommand(argv, parse, FACILITATOR_USAGE, io);
  if (typeof options === 'number') return options;
  // What the vendor must read goes to stdout with the table, to stderr beside JSON.
  const say = options.json ? io.err : io.out;
  let devnet: AuditDevnet | undefined;
  let facilitator: AuditedProcess | undefined;
  try {
    if (!options.own) {
      devnet = await startAuditDevnet(options.devnet).catch((error: unknown) => {
        throw new ChainUnreachable(`could not start the devnet: ${oneLine(error)}`);
      });
    }
    const chain = devnet ? devnet.chain : await ownChain(options.own!);
    const network = `eip155:${chain.chainId}`;
    say(`Auditing the facilitator at ${options.url}`);
    say(`  chain      ${network}, RPC ${chain.rpcUrl}${devnet ? ' (devnet started by the kit)' : ''}`);
    say(
      `  token      ${chain.token.address} (EIP-712 name "${chain.token.name}", version "${chain.token.version}")`,
    );
    say(`  payer      ${privateKeyToAccount(chain.payers[0]!).address}, payTo ${chain.payTo}`);
    if (devnet) {
      say(`  settle     from any account: the kit funds every eip155 signer /supported lists, or use`);
      say(
        `             ${privateKeyToAccount(devnet.settlerKey).address} (public anvil test key ${devnet.settlerKey})`,
      );
    }
    if (options.exec) {
      facilitator = startAuditedProcess(
        options.exec,
        {
          TOLLBOOTH_RPC_URL: chain.rpcUrl,
          TOLLBOOTH_CHAIN_ID: String(chain.chainId),
          TOLLBOOTH_NETWORK: network,
          TOLLBOOTH_TOKEN: chain.token.address,
          ...(devnet ? { TOLLBOOTH_SETTLER_KEY: devnet.settlerKey } : {}),
        },
        io.err,
      );
    }
    if (options.waitMs > 0)
      say(
        `  waiting    up to ${options.waitMs / 1000} s for ${options.url}/supported to list exact on ${network}`,
      );
    const signers = await waitUntilReady(options, network, facilitator);
    if (devnet) await devnet.fund(signers);
    const print = createHumanPrinter(io.out, (r) => sectionOf(r.id));
    const report = await runFacilitatorAudits(
      { url: options.url, headers: options.headers, timeoutMs: options.timeoutMs },
      {
        chain,
        onResult: (result) => {
          if (!options.json) print(result);
        },
      },
    );
    return finish(report, chain, options, io);
  } catch (error) {
    if (
      error instanceof FacilitatorUnreachable ||
      error instanceof ChainUnreachable ||
      error instanceof UsageError
    ) {
      io.err(`tollbooth-conformance: cannot audit: ${error.message}`);
      return 2;
    }
    throw error;
  } finally {
    await facilitator?.stop();
    await devnet?.stop();
  }
}

function finish(
  report: FacilitatorAuditReport,
  chain: AuditChainConfig,
  options: Options,
  io: CliIo,
): number {
  const exitCode = exitCodeOf(report.results);
  if (options.json) {
    io.out(
      JSON.stringify(
        {
          kind: 'facilitator',
          target: report.url,
          network: report.network,
          rpcUrl: chain.rpcUrl,
          token: chain.token,
          results: report.results,
          timings: report.timings,
          summary: summarize(report.results),
          exitCode,
        },
        null,
        2,
      ),
    );
  } else {
    for (const line of timingLines(report.timings, {
      supported: 'GET /supported',
      verify: 'POST /verify',
      settle: 'POST /settle',
    }))
      io.out(line);
    io.out('');
    io.out(summaryLine(report.results));
  }
  if (options.junit) {
    const suites = Object.values(SECTIONS)
      .map((name) => ({ name, results: report.results.filter((r) => sectionOf(r.id) === name) }))
      .filter((suite) => suite.results.length > 0);
    io.writeFile(options.junit, renderJunit('tollbooth-conformance facilitator', suites));
  }
  return exitCode;
}
