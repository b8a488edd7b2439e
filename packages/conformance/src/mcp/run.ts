import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { AuditFailure } from '../audit-failure';
import { type AuditChainConfig, createAuditChain } from '../facilitator/chain';
import type { FaultSwitch } from '../faults/types';
import { type AuditResult, oneLine } from '../results';
import { MCP_AUDITS } from './audits';
import type { McpAudit, McpAuditContext } from './types';

/** The MCP server under audit and the paid tool it sells. */
export interface McpTarget {
  /** The streamable HTTP endpoint, e.g. `http://127.0.0.1:3000/mcp`. */
  url: string;
  /** A paid tool whose handler answers a result for `arguments`. */
  tool: string;
  arguments?: Record<string, unknown>;
}

export interface RunMcpAuditsOptions {
  /** The chain the server's payments settle on, with the payer. */
  chain: AuditChainConfig;
  /** The fault proxy between the server and its facilitator; without it AMCP-07 is skipped. */
  faults?: FaultSwitch;
  /** Default: every MCP audit. */
  audits?: readonly McpAudit[];
  /** How long the server may take to serve a retried payload once a fault is gone. Default 30 000 ms. */
  recoveryMs?: number;
  onResult?(result: AuditResult): void;
}

/**
 * Runs the MCP audits one after another against an MCP server selling a tool, with the MCP SDK's
 * own client over streamable HTTP (docs/mcp.md#the-mcp-audits).
 * @example
 * const results = await runMcpAudits({ url: `${url}/mcp`, tool: 'get_fee_landscape' }, { chain: kit.chain, faults: kit.proxy });
 */
export async function runMcpAudits(target: McpTarget, options: RunMcpAuditsOptions): Promise<AuditResult[]> {
  const chain = createAuditChain(options.chain);
  chain.startBlock = await chain.client.getBlockNumber();
  const client = new Client({ name: 'tollbooth-conformance', version: '0.1.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(target.url)));
  const ctx: McpAuditContext = {
    tool: target.tool,
    arguments: target.arguments ?? {},
    call: async (params) => (await client.callTool(params)) as CallToolResult,
    list: async () => {
      const tools: Tool[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor === undefined ? {} : { cursor });
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return tools;
    },
    chain,
    ...(options.faults ? { faults: options.faults } : {}),
    recoveryMs: options.recoveryMs ?? 30_000,
  };
  const results: AuditResult[] = [];
  try {
    for (const audit of options.audits ?? MCP_AUDITS) {
      const result = await runOne(audit, ctx);
      options.onResult?.(result);
      results.push(result);
    }
  } finally {
    await client.close();
  }
  return results;
}

async function runOne(audit: McpAudit, ctx: McpAuditContext): Promise<AuditResult> {
  const described = { id: audit.id, level: audit.level, profile: audit.profile, sentence: audit.sentence };
  if (audit.needsFaults && !ctx.faults)
    return { ...described, status: 'skipped', message: 'needs the fault proxy in front of the facilitator' };
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  try {
    await audit.run(ctx);
    return { ...described, status: 'passed', ms: ms() };
  } catch (error) {
    if (error instanceof AuditFailure)
      return { ...described, status: 'failed', message: error.message, ms: ms() };
    return { ...described, status: 'error', message: `could not run: ${oneLine(error)}`, ms: ms() };
  }
}
