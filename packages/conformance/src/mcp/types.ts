import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { AuditChain } from '../facilitator/chain';
import type { FaultSwitch } from '../faults/types';
import type { AuditLevel, AuditProfile } from '../types';

/** A tools/call as the MCP audits send it. */
export interface McpCall {
  name: string;
  arguments?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

/** What every MCP audit receives. */
export interface McpAuditContext {
  /** The paid tool under audit and the arguments it is called with. */
  tool: string;
  arguments: Record<string, unknown>;
  /** Calls a tool on the server (the MCP SDK client, which validates results against listed output schemas). */
  call(params: McpCall): Promise<CallToolResult>;
  /** `tools/list`, every page. */
  list(): Promise<Tool[]>;
  chain: AuditChain;
  /** The fault proxy between the server and its facilitator; audits that need it are skipped without. */
  faults?: FaultSwitch;
  /** How long the server may take to serve a retried payload once a fault is gone. */
  recoveryMs: number;
}

/** One MCP audit: a stable id, its rule, and its check. */
export interface McpAudit {
  readonly id: string;
  readonly level: AuditLevel;
  readonly profile: AuditProfile;
  readonly sentence: string;
  /** Skipped without a fault proxy. */
  readonly needsFaults?: boolean;
  run(ctx: McpAuditContext): Promise<void>;
}
