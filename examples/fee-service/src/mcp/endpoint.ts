import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { TollboothGate } from '@tollbooth/core';
import { type AnyTool, createToolServerPool } from '@tollbooth/mcp';
import { MCP_PATH, toolCallsOf } from '../http/mcp-edge';
import type { RouteContext, RouteResult, ServiceRoute } from '../http/types';

export { MCP_PATH } from '../http/mcp-edge';

/** The request headers the streamable HTTP transport reads. */
const MCP_HEADERS = [
  'accept',
  'content-type',
  'mcp-protocol-version',
  'mcp-session-id',
  'last-event-id',
  'origin',
];

export interface McpEndpointOptions {
  /** The service's gate: its routes hold the tool routes, so tool calls share the HTTP ledger. */
  gate: TollboothGate;
  tools: readonly AnyTool[];
  info: { name: string; version: string };
}

/** A JSON-RPC batch carrying more than one tools/call, as the transport answers an invalid request. */
const tooManyCalls: RouteResult = {
  status: 400,
  headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
  body: {
    jsonrpc: '2.0',
    error: { code: -32600, message: 'Invalid Request: a batch may carry one tools/call' },
    id: null,
  },
};

/**
 * The MCP endpoint as service routes (`POST` and `GET /mcp`), framework-neutral like every route
 * of the service: streamable HTTP in stateless JSON mode, one MCP SDK server per request in flight
 * (a tool call carries all it needs: the payment travels in its `_meta`), taken from a pool of
 * servers built once. `GET` (a server-sent event stream) answers 405, as stateless servers do.
 */
export function createMcpRoutes(options: McpEndpointOptions): ServiceRoute[] {
  // Built once, reused request after request (a server per request cost more CPU than the call).
  const servers = createToolServerPool({ info: options.info, gate: options.gate, tools: options.tools });
  const handler = async (context: RouteContext): Promise<RouteResult> => {
    const headers = new Headers();
    for (const name of MCP_HEADERS) {
      const value = context.header(name);
      if (value !== undefined) headers.set(name, value);
    }
    const body = context.method === 'POST' ? await context.readBody() : undefined;
    // The rate limits count a request once, under its tool's limit (../http/mcp-edge.ts): one call per request.
    if (body && toolCallsOf(body).length > 1) return tooManyCalls;
    const request = new Request(context.url, {
      method: context.method,
      headers,
      ...(body ? { body: new Uint8Array(body) } : {}),
    });
    return servers.use(async (server) => {
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      await server.connect(transport);
      const response = await transport.handleRequest(request);
      const bytes = Buffer.from(await response.arrayBuffer());
      const answer: Record<string, string> = { 'cache-control': 'no-store' };
      response.headers.forEach((value, name) => {
        answer[name] = value;
      });
      return { status: response.status, headers: answer, body: bytes };
    });
  };
  return [
    { method: 'POST', path: MCP_PATH, handler },
    { method: 'GET', path: MCP_PATH, handler },
  ];
}
