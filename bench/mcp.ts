// The paid MCP tool call of section 1 (`mcp/paid`): a tools/call of the benchmark's paid tool
// over streamable HTTP, with the same signed payments as the paid HTTP cases, each in its body.
import type { PaymentPayload } from '@tollbooth/core';
import { MCP_HEADERS, MCP_TOOL } from './lib/fixtures';
import type { HttpCase } from './lib/http-case';
import type { ServerProcess } from './lib/server-process';

export const MCP_CASE_ID = 'mcp/paid';
/**
 * The same call on a server that builds one MCP SDK server per request (the endpoint before its
 * servers were pooled): run only when BENCH_HTTP_CASES names it, to show the pool's gain.
 */
export const MCP_PER_REQUEST_CASE_ID = 'mcp/paid-per-request';
const MCP_PATH = '/mcp';

/** A tools/call of the benchmark's paid tool, paid with `payment` in `_meta` (JSON-RPC id `id`). */
function toolCallBody(payment: PaymentPayload, id: number): string {
  const params = { name: MCP_TOOL, arguments: {}, _meta: { 'x402/payment': payment } };
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params });
}

/**
 * The paid tool call over MCP beside the paid HTTP request: the same payments, gate options and
 * instant facilitator, the call in the body of a POST to the streamable HTTP endpoint. Compared
 * with bare Fastify's hello like the fee service's cases; its CPU per call sits beside
 * `fastify/paid`'s. One call is probed first: it must come back settled. With `perRequest`, the
 * same on a server building one SDK server per request, beside it.
 */
export async function mcpCases(
  start: (name: string, file: string, args?: string[]) => Promise<ServerProcess | undefined>,
  payments: readonly PaymentPayload[],
  notes: string[],
  options: { pooled: boolean; perRequest: boolean } = { pooled: true, perRequest: false },
): Promise<HttpCase[]> {
  const bodies = payments.map((payment, i) => toolCallBody(payment, i + 1));
  const variants = [
    ...(options.pooled ? [{ id: MCP_CASE_ID, name: 'mcp-paid', args: [], how: 'SDK servers pooled' }] : []),
    ...(options.perRequest
      ? [
          {
            id: MCP_PER_REQUEST_CASE_ID,
            name: 'mcp-paid-per-request',
            args: ['--per-request'],
            how: 'one SDK server built per request',
          },
        ]
      : []),
  ];
  const cases: HttpCase[] = [];
  for (const variant of variants) {
    const server = await start(variant.name, 'mcp', variant.args);
    if (!server) continue;
    const probe = await fetch(`${server.url}${MCP_PATH}`, {
      method: 'POST',
      headers: MCP_HEADERS,
      body: bodies[0],
    });
    const text = await probe.text();
    if (probe.status !== 200 || !text.includes('"x402/payment-response":{"success":true')) {
      notes.push(
        `the MCP server ${variant.name} answered its probe with ${probe.status} ${text.slice(0, 200)}; its case is left out.`,
      );
      continue;
    }
    cases.push({
      id: variant.id,
      framework: 'node:http + MCP SDK',
      label: `Tollbooth MCP, paid tool call with a valid payment (tools/call, streamable HTTP, stateless JSON, ${variant.how})`,
      kind: 'mcp-paid',
      server,
      path: MCP_PATH,
      baseline: 'fastify/bare',
      expectStatus: 200,
      pool: { headers: bodies.slice(1), next: 0, bodies: bodies.slice(1) },
    });
  }
  return cases;
}
