// The paid tool call over MCP: `bench/servers/mcp.ts`. A Node HTTP server whose POST /mcp is the
// MCP SDK's streamable HTTP transport (stateless, JSON answers, SDK servers pooled as the fee
// service's /mcp has them; `--per-request` builds one per request instead) with one paid tool sold through the same gate options as the HTTP
// benchmark servers (route, exact-EVM scheme, instant facilitator); GET /hello for warm probes.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createPaymentGate } from '@tollbooth/core';
import { createToolServer, createToolServerPool, defineTool, toolRoutes } from '@tollbooth/mcp';
import { benchRoutes, HELLO_BODY, HELLO_PATH, MCP_TOOL, PAID_PATH } from '../lib/fixtures';
import { announce } from '../lib/serve';
import { tollboothOptions } from './tollbooth-options';

/** The resource URL the benchmark's signed payments name (their challenge's). */
const RESOURCE = `http://127.0.0.1${PAID_PATH}`;

const route = benchRoutes()[`GET ${PAID_PATH}`]!;
const tools = [
  defineTool({
    name: MCP_TOOL,
    description: route.description ?? 'a benchmark tool',
    accepts: route.accepts,
    resource: RESOURCE,
    handler: () => ({
      content: [{ type: 'text', text: JSON.stringify(HELLO_BODY) }],
      structuredContent: HELLO_BODY,
    }),
  }),
];
const gate = createPaymentGate({ ...tollboothOptions(), routes: toolRoutes(tools) });
const hello = Buffer.from(JSON.stringify(HELLO_BODY));

const options = { info: { name: 'bench', version: '1.0.0' }, gate, tools };
const perRequest = process.argv.includes('--per-request');
const pool = createToolServerPool(options);

/** Serves one request on `mcp`; resolves once the answer is written (closing the server earlier aborts it). */
async function serve(mcp: Server, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await mcp.connect(transport);
  await transport.handleRequest(req, res);
  if (!res.writableFinished) await new Promise((resolve) => res.once('close', resolve));
}

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === HELLO_PATH) {
    res.writeHead(200, { 'content-type': 'application/json' }).end(hello);
    return;
  }
  let served: Promise<void>;
  if (perRequest) {
    const mcp = createToolServer(options);
    served = serve(mcp, req, res).finally(() => mcp.close());
  } else {
    served = pool.use((mcp) => serve(mcp, req, res));
  }
  served.catch(() => {
    if (!res.headersSent) res.writeHead(500).end();
  });
});
await announce(server);
