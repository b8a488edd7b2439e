// tollbooth-conformance mcp <url> --tool <name>: the MCP audits (docs/mcp.md#the-mcp-audits)
// against a running MCP server that sells a tool, paid on the kit's devnet behind its fault proxy
// (default) or on the vendor's own chain, with the vendor's fault proxy when there is one.
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createFacilitatorFaultControl } from '@tollbooth/facilitator';
import { privateKeyToAccount } from 'viem/accounts';
import { type AuditChainConfig, createAuditChain } from '../facilitator/chain';
import { ChainUnreachable } from '../facilitator/run';
import type { FaultKit } from '../faults/kit';
import { payableRequirement } from '../faults/server-payment';
import type { FaultSwitch } from '../faults/types';
import { TargetUnreachable } from '../http';
import { MCP_AUDITS } from '../mcp/audits';
import { runMcpAudits } from '../mcp/run';
import { createHumanPrinter, summaryLine } from '../report/human';
import { renderJunit } from '../report/junit';
import { type AuditResult, exitCodeOf, oneLine, summarize } from '../results';
import type { AuditProfile } from '../types';
import type { AuditedProcess } from './audited-process';
import { type CliIo, parseCommand, secondsOption, UsageError } from './io';
import { OWN_CHAIN_OPTIONS, ownChain, parseOwnChain } from './own-chain';
import { startKit, startServerUnderAudit, waitForServer } from './server-under-audit';

export const MCP_USAGE = `Usage: tollbooth-conformance mcp <url> --tool <name> [--args <json>] [options]

Audits an MCP server that sells tools (the x402 MCP transport's tool-result binding and Tollbooth's
failure semantics) with the MCP SDK's own client over streamable HTTP, paying one tool on chain
and reading on chain what the payer was charged. <url> is the MCP endpoint, e.g.
http://127.0.0.1:3000/mcp.

  --tool <name>           a paid tool (required)
  --args <json>           its arguments, a JSON object (default {})

The chain (default: the kit, as for faults — a devnet, an honest facilitator settling on it and a
fault proxy in front; point the server's facilitator URL at the proxy):
  --exec <command>        start the server once the kit is up, with TOLLBOOTH_FACILITATOR_URL,
                          TOLLBOOTH_RPC_URL, TOLLBOOTH_CHAIN_ID, TOLLBOOTH_NETWORK, TOLLBOOTH_TOKEN
                          and TOLLBOOTH_PAY_TO in its environment; stopped when the run ends
  --devnet-port, --proxy-port, --chain-id, --token, --facilitator   as for faults

Your own chain instead (the server settles there):
  --rpc-url <url>         its JSON-RPC endpoint
  --asset <address>       the EIP-3009 token the tool is priced in
  --payer-key <hex>       a private key holding the token (repeatable; the first pays)
  --fault-proxy <url>     a tollbooth-facilitator-fault-proxy between the server and its
                          facilitator (driven through <url>/__fault); without it AMCP-07 is skipped

Options:
  --profile <name>        tollbooth (default): every MCP audit; x402: only the transport's rules
  --wait <s>              how long to wait for the tool to offer exact on the chain (default 30)
  --recovery <s>          how long the server may take to serve a retried payload (default 30)
  --json, --junit <file>  as for the other commands

Exit status: 0 every MUST rule is kept; 1 a MUST rule is broken; 2 a usage error, an unreachable
server or chain, or a MUST rule that could not be judged.`;

function parse(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      tool: { type: 'string' },
      args: { type: 'string' },
      exec: { type: 'string' },
      'devnet-port': { type: 'string' },
      'proxy-port': { type: 'string' },
      'chain-id': { type: 'string' },
      token: { type: 'string' },
      facilitator: { type: 'string' },
      ...OWN_CHAIN_OPTIONS,
      'fault-proxy': { type: 'string' },
      profile: { type: 'string' },
      wait: { type: 'string' },
      recovery: { type: 'string' },
      json: { type: 'boolean' },
      junit: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return { help: true as const };
  const url = positionals[0];
  const problems: string[] = [];
  if (positionals.length !== 1 || !url || !/^https?:\/\/[^/]/.test(url))
    problems.push('one http(s) URL of the MCP endpoint is required');
  if (!values.tool) problems.push('--tool <name> is required');
  let args: unknown = {};
  if (values.args !== undefined) {
    try {
      args = JSON.parse(values.args);
    } catch {
      args = undefined;
    }
    if (typeof args !== 'object' || args === null || Array.isArray(args))
      problems.push('--args must be a JSON object');
  }
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
  const own = parseOwnChain(values, problems, { payTo: false });
  if (own) {
    for (const name of ['devnet-port', 'proxy-port', 'chain-id', 'token', 'facilitator', 'exec'] as const)
      if (values[name] !== undefined) problems.push(`--${name} is for the kit's devnet, not with --rpc-url`);
  } else if (values['fault-proxy'] !== undefined) {
    problems.push("--fault-proxy needs --rpc-url (on the kit's devnet the kit's own proxy is used)");
  }
  const faultProxy = values['fault-proxy'];
  if (faultProxy !== undefined && !/^https?:\/\/[^/]/.test(faultProxy))
    problems.push('--fault-proxy must be an http(s) URL');
  const profile = values.profile ?? 'tollbooth';
  if (profile !== 'x402' && profile !== 'tollbooth') problems.push('--profile is x402 or tollbooth');
  const parsed = {
    help: false as const,
    url: url ?? '',
    tool: values.tool ?? '',
    args: args as Record<string, unknown>,
    exec: values.exec,
    kit: {
      devnetPort: port(values['devnet-port'], '--devnet-port'),
      proxyPort: port(values['proxy-port'], '--proxy-port'),
      chainId,
      token: values.token as 'tollbooth' | 'circle' | undefined,
      facilitatorUrl: values.facilitator,
    },
    own,
    faultProxy,
    profile: profile as AuditProfile,
    waitMs: secondsOption(values.wait, '--wait', 30),
    recoveryMs: secondsOption(values.recovery, '--recovery', 30),
    json: values.json === true,
    junit: values.junit,
  };
  if (problems.length > 0) throw new UsageError(problems.join('\n'));
  return parsed;
}

type Options = Exclude<ReturnType<typeof parse>, { help: true }>;

/** Waits until an unpaid call of the tool answers a challenge the kit can pay on `chain`. */
function waitUntilReady(
  options: Options,
  chain: AuditChainConfig,
  child: AuditedProcess | undefined,
): Promise<void> {
  const audited = createAuditChain(chain);
  return waitForServer(options.url, options.waitMs, child, async () => {
    const client = new Client({ name: 'tollbooth-conformance', version: '0.1.0' });
    try {
      try {
        await client.connect(new StreamableHTTPClientTransport(new URL(options.url)));
      } catch (error) {
        throw new TargetUnreachable(`${options.url} answers no MCP initialize: ${oneLine(error)}`);
      }
      const result = await client.callTool({ name: options.tool, arguments: options.args });
      const challenge = result.structuredContent as Record<string, unknown> | undefined;
      if (result.isError !== true || !Array.isArray(challenge?.['accepts']))
        throw new UsageError(`an unpaid call of ${options.tool} answered no PaymentRequired: is it paid?`);
      payableRequirement(audited, challenge);
    } finally {
      await client.close().catch(() => undefined);
    }
  });
}

export async function mcpCommand(argv: string[], io: CliIo): Promise<number> {
  const options = parseCommand(argv, parse, MCP_USAGE, io);
  if (typeof options === 'number') return options;
  const say = options.json ? io.err : io.out;
  let kit: FaultKit | undefined;
  let server: AuditedProcess | undefined;
  try {
    if (!options.own) {
      kit = await startKit(options.kit);
    }
    const chain = kit ? kit.chain : await ownChain(options.own!);
    const faults: FaultSwitch | undefined = kit
      ? kit.proxy
      : options.faultProxy
        ? createFacilitatorFaultControl({ url: options.faultProxy })
        : undefined;
    const network = `eip155:${chain.chainId}`;
    say(`Auditing the MCP tool ${options.tool} at ${options.url}`);
    if (kit) say(`  facilitator URL  ${kit.facilitatorUrl} (the fault proxy; point the server here)`);
    else if (options.faultProxy)
      say(`  fault proxy      ${options.faultProxy} (between the server and its facilitator)`);
    else say('  fault proxy      none: AMCP-07 is skipped (--fault-proxy <url>)');
    say(`  chain            ${network}, RPC ${chain.rpcUrl}${kit ? " (the kit's devnet)" : ''}`);
    say(
      `  token            ${chain.token.address} (EIP-712 name "${chain.token.name}", version "${chain.token.version}")`,
    );
    say(`  payer            ${privateKeyToAccount(chain.payers[0]!).address}`);
    if (kit && options.exec) server = startServerUnderAudit(options.exec, kit, chain, io.err);
    if (options.waitMs > 0)
      say(
        `  waiting          up to ${options.waitMs / 1000} s for ${options.tool} to offer exact on ${network}`,
      );
    await waitUntilReady(options, chain, server);
    const print = createHumanPrinter(io.out, () => 'MCP tools');
    const results: AuditResult[] = await runMcpAudits(
      { url: options.url, tool: options.tool, arguments: options.args },
      {
        chain,
        ...(faults ? { faults } : {}),
        audits: MCP_AUDITS.filter((a) => options.profile === 'tollbooth' || a.profile === 'x402'),
        recoveryMs: options.recoveryMs,
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
            kind: 'mcp',
            target: options.url,
            tool: options.tool,
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
      io.writeFile(options.junit, renderJunit('tollbooth-conformance mcp', [{ name: 'MCP tools', results }]));
    return exitCode;
  } catch (error) {
    if (
      error instanceof TargetUnreachable ||
      error instanceof UsageError ||
      error instanceof ChainUnreachable
    ) {
      io.err(`tollbooth-conformance: cannot audit: ${error.message}`);
      return 2;
    }
    throw error;
  } finally {
    await server?.stop();
    await kit?.stop();
  }
}
