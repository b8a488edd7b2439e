import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  type Implementation,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import type { TollboothGate } from '@tollbooth/core';
import type * as z from 'zod';
import { callTool } from './call-tool';
import { listTool } from './listing';
import type { AnyTool } from './tool';

/** The tools a server offers and the gate that sells the paid ones. */
export interface ToolServerOptions {
  /** The gate whose routes include `toolRoutes(tools)`; shared with HTTP adapters, it shares their ledger. */
  gate: TollboothGate;
  tools: readonly AnyTool[];
}

const TOOL_NAME = /^[A-Za-z0-9_.\-/]{1,128}$/;

/**
 * Serves `tools/list` and `tools/call` on an MCP SDK `Server` (`@modelcontextprotocol/sdk`):
 * arguments validated with each tool's zod schema before any challenge (an `isError` result), an
 * unknown tool answered with the JSON-RPC error -32602, and every paid call run through the gate.
 *
 * @throws TypeError for a tool name MCP does not allow, or a name given twice.
 */
export function registerTools(server: Server, options: ToolServerOptions): void {
  const byName = new Map<string, AnyTool>();
  for (const tool of options.tools) {
    if (!TOOL_NAME.test(tool.name)) throw new TypeError(`"${tool.name}" is no MCP tool name`);
    if (byName.has(tool.name)) throw new TypeError(`two tools are named "${tool.name}"`);
    byName.set(tool.name, tool);
  }
  const { gate } = options;
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: options.tools.map((tool) => listTool(tool, gate)),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name, arguments: given, _meta } = request.params;
    const tool = byName.get(name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const parsed = tool.input
      ? await tool.input.safeParseAsync(given ?? {})
      : { success: true as const, data: {} };
    if (!parsed.success) {
      const issues = parsed.error.issues
        .slice(0, 5)
        .map((issue: z.core.$ZodIssue) => `${issue.path.join('.') || '(arguments)'}: ${issue.message}`)
        .join('; ');
      return failure(`Invalid arguments for tool ${name}: ${issues}`);
    }
    const meta = (_meta ?? {}) as Record<string, unknown>;
    try {
      return await callTool(gate, {
        tool,
        arguments: parsed.data as Record<string, unknown>,
        meta,
        signal: extra.signal,
        raw: { tool: name, arguments: parsed.data, meta, sessionId: extra.sessionId },
      });
    } catch (error) {
      return failure(error instanceof Error ? error.message : String(error));
    }
  });
}

/**
 * A new MCP SDK `Server` offering the tools (one per session or per stateless request: a `Server`
 * serves one transport at a time).
 * @example
 * const server = createToolServer({ info: { name: 'fees', version: '1.0.0' }, gate, tools });
 * await server.connect(new StreamableHTTPServerTransport({ sessionIdGenerator: undefined }));
 */
export function createToolServer(
  options: ToolServerOptions & { info: Implementation; instructions?: string },
): Server {
  const server = new Server(options.info, {
    capabilities: { tools: {} },
    ...(options.instructions === undefined ? {} : { instructions: options.instructions }),
  });
  registerTools(server, options);
  return server;
}

/** Servers of a stateless endpoint, reused from one request to the next (see {@link createToolServerPool}). */
export interface ToolServerPool {
  /**
   * Runs `serve` with an idle server (a new one when none is idle), closes it once `serve` settles
   * and keeps it for a later request.
   */
  use<T>(serve: (server: Server) => Promise<T>): Promise<T>;
  /** How many closed servers wait for a request. */
  readonly idle: number;
}

/**
 * The servers of a stateless endpoint (one request, one transport), built once and reused: a
 * server serves one transport at a time, and building one (the SDK's request handlers, the tool
 * table) costs more CPU than the tool call it serves. A server closed after its request is
 * connected again to the next one; up to `maxIdle` wait. What a server remembers of an
 * `initialize` (the client's capabilities) is only read to send requests to the client, which a
 * stateless JSON endpoint never does.
 * @param options as for {@link createToolServer}; `maxIdle` default 32
 * @throws TypeError as {@link createToolServer} (on the first request that builds a server)
 * @example
 * const pool = createToolServerPool({ info: { name: 'fees', version: '1.0.0' }, gate, tools });
 * const response = await pool.use(async (server) => {
 *   const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
 *   await server.connect(transport);
 *   return transport.handleRequest(request);
 * });
 */
export function createToolServerPool(
  options: ToolServerOptions & { info: Implementation; instructions?: string; maxIdle?: number },
): ToolServerPool {
  const maxIdle = options.maxIdle ?? 32;
  const idle: Server[] = [];
  return {
    get idle() {
      return idle.length;
    },
    async use(serve) {
      const server = idle.pop() ?? createToolServer(options);
      try {
        return await serve(server);
      } finally {
        let reusable = true;
        await server.close().catch(() => {
          reusable = false;
        });
        // A server whose transport did not let go would refuse its next connect.
        if (reusable && server.transport === undefined && idle.length < maxIdle) idle.push(server);
      }
    },
  };
}

function failure(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}
