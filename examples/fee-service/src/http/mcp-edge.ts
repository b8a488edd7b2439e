// What the rate limits in front of the gate see of an MCP request: a tools/call POSTed to /mcp is
// the tool's own request (`TOOL /<name>`, its route in the gate), so it counts under the limits of
// its HTTP twin (the edge limit for a paid tool, the AI limit for an AI one) — read from the body,
// which is kept for the handler.
import { TOOL_METHOD } from '@tollbooth/core';
import type { EdgeRequest } from './types';

/** Where the fee service serves MCP (streamable HTTP). */
export const MCP_PATH = '/mcp';

/**
 * Whether a request goes to the MCP endpoint with a body: a POST whose path is `/mcp` however the
 * routers of the three frameworks would still route it there (any case, a trailing slash,
 * percent-encoded letters).
 */
export function isMcpPost(request: EdgeRequest): boolean {
  if (request.method.toUpperCase() !== 'POST') return false;
  const query = request.target.indexOf('?');
  let path = query < 0 ? request.target : request.target.slice(0, query);
  if (path.length > 16) return false;
  if (path.includes('%')) {
    try {
      path = decodeURIComponent(path);
    } catch {
      return false;
    }
  }
  return path.toLowerCase().replace(/\/+$/, '') === MCP_PATH;
}

/** The names of the `tools/call` messages of a JSON-RPC body (one message or a batch); none when it is no JSON. */
export function toolCallsOf(body: Uint8Array): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
  } catch {
    return [];
  }
  const names: string[] = [];
  for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
    const call = message as { method?: unknown; params?: { name?: unknown } } | null;
    if (call?.method === 'tools/call')
      names.push(typeof call.params?.name === 'string' ? call.params.name : '');
  }
  return names;
}

/**
 * The request the limits judge for a POST to /mcp: the tool's (`TOOL /<name>`) when the body is
 * one tools/call (a batch carrying more is refused by the endpoint), else the request itself.
 */
export async function mcpEdgeRequest(
  request: EdgeRequest,
  readBody: () => Promise<Buffer>,
): Promise<EdgeRequest> {
  let body: Buffer;
  try {
    body = await readBody();
  } catch {
    // Too large or cut: the endpoint answers it, before any tool runs.
    return request;
  }
  const [name] = toolCallsOf(body);
  return name ? { method: TOOL_METHOD, target: `/${name}` } : request;
}
