import type { OutgoingHttpHeaders } from 'node:http';
import { buffer } from 'node:stream/consumers';
import type { GateResponse, HandlerResponse } from '../gate/types';

/**
 * A framework's response headers as the gate takes them: lower-case names, strings or string
 * lists, unset headers dropped (Node's `getHeaders()`, Koa's `ctx.response.headers`, Fastify's
 * `reply.getHeaders()`).
 */
export function toHandlerHeaders(
  headers: OutgoingHttpHeaders | Record<string, string | number | readonly string[] | undefined>,
): HandlerResponse['headers'] {
  const result: HandlerResponse['headers'] = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined)
      result[name.toLowerCase()] = Array.isArray(value) ? value.map(String) : String(value);
  }
  return result;
}

/**
 * The headers of a gate response ready for a framework's `setHeader`: `set-cookie`, stored as
 * one `\n`-joined string, goes back to a list.
 */
export function toOutgoingHeaders(response: GateResponse): Record<string, string | string[]> {
  const result: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    result[name] = name === 'set-cookie' ? value.split('\n') : value;
  }
  return result;
}

/**
 * The bytes a framework would send for a response body: nothing, a string, bytes, a Node or web
 * stream, a Blob or Response, or (as Koa does) any other value as JSON.
 */
export async function toBodyBytes(body: unknown): Promise<Uint8Array> {
  if (body === null || body === undefined) return new Uint8Array();
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof Uint8Array) return body;
  if (body instanceof Blob || body instanceof Response) return new Uint8Array(await body.arrayBuffer());
  if (typeof (body as { pipe?: unknown }).pipe === 'function' || body instanceof ReadableStream) {
    return buffer(body as NodeJS.ReadableStream);
  }
  return Buffer.from(JSON.stringify(body), 'utf8');
}
