import { isAscii } from 'node:buffer';
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { buffer } from 'node:stream/consumers';
import { mergeHeaderList } from '../http/header-list';
import { KNOWN_TEXT_MAX_BYTES, knownBodyText } from '../http/known-text';
import type { GateResponse, HandlerResponse } from '../http/types';

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

/** A framework's response headers, as {@link applyGateHeaders} edits them. */
export interface HeaderTarget {
  /** Names of the headers set so far (any case). */
  names(): string[];
  get(name: string): unknown;
  remove(name: string): void;
  set(name: string, value: string | string[]): void;
}

/**
 * Headers that describe a representation: one set before the gate answered belongs to a body
 * that is not sent, so it never survives into a gate response that does not set it itself.
 */
const REPRESENTATION_HEADERS = new Set([
  'content-encoding',
  'content-language',
  'content-location',
  'content-range',
  'content-disposition',
  'content-md5',
  'etag',
  'last-modified',
  'transfer-encoding',
]);

/**
 * Puts a gate response's headers on a framework response. Headers set by middleware that ran
 * before the gate (CORS, security headers, request ids) are kept, so a browser can read a 402;
 * the gate's own headers win, and `Access-Control-Expose-Headers` and `Vary` are merged with
 * earlier ones (a CORS layer's `Vary: Origin` stays beside the paywall's `Vary: Accept`, or a cache
 * would hand one origin's answer to another).
 * Anything else set since `before` was taken (by the handler, whose response is not the one sent:
 * a `Set-Cookie`, an `ETag`) is removed. Without `before`, every header set so far counts as set
 * before the gate (the gate answered before any handler ran). Representation headers
 * (`ETag`, `Content-Encoding`, …) never carry over. `content-length` is set from the body.
 */
export function applyGateHeaders(
  target: HeaderTarget,
  response: GateResponse,
  before?: ReadonlySet<string>,
): void {
  const headers = response.headers;
  for (const name of target.names()) {
    const lower = name.toLowerCase();
    if (lower in headers) continue;
    if ((before !== undefined && !before.has(lower)) || REPRESENTATION_HEADERS.has(lower))
      target.remove(name);
  }
  for (const name in headers) {
    const value = headers[name]!;
    if (name === 'set-cookie') target.set(name, value.split('\n'));
    else if (name === 'access-control-expose-headers' || name === 'vary')
      target.set(name, mergeHeaderList(target.get(name), value));
    else target.set(name, value);
  }
  target.set('content-length', String(response.body.byteLength));
}

/** Lower-case names of the headers a header object holds now (the `before` of {@link applyGateHeaders}). */
export function headerNamesOf(headers: object): Set<string> {
  const names = new Set<string>();
  for (const name of Object.keys(headers)) names.add(name.toLowerCase());
  return names;
}

/** A Node `Buffer` over the same bytes (no copy), as frameworks send bodies fastest. */
export function asBuffer(body: Uint8Array): Buffer {
  return Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

/** Bodies up to this size are sent as a string when they are ASCII (see {@link sendableBody}). */
const SENDABLE_TEXT_MAX_BYTES = KNOWN_TEXT_MAX_BYTES;

/**
 * A gate response body as Node writes it fastest: a small ASCII body (every JSON body the gate
 * writes itself) as a string, anything else as a Buffer over the same bytes. Node sends a string
 * in one write together with the status line and headers, but a Buffer as a second chunk of a
 * `writev`; measured on a raw Node server writing the 402 on this project's benchmark machine,
 * the string costs about 5 µs less per response (~30 vs ~35 µs of server CPU). ASCII bytes read
 * the same in UTF-8 and Latin-1, so the bytes on the wire and the `content-length` do not change.
 */
export function sendableBody(body: Uint8Array): string | Buffer {
  // A cached 402 challenge: its text was kept when it was built.
  const known = knownBodyText(body);
  if (known !== undefined) return known;
  const bytes = asBuffer(body);
  return bytes.byteLength <= SENDABLE_TEXT_MAX_BYTES && isAscii(bytes) ? bytes.toString('latin1') : bytes;
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

/** `scheme://authority` at the start of an absolute-form request target, and the rest. */
const ABSOLUTE_FORM = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/([^/?#]*)(.*)$/s;

/**
 * Rewrites an absolute-form request target (`GET http://host/path HTTP/1.1`, legal HTTP/1.1 that
 * proxies send) to origin-form, as RFC 9112 section 3.2.2 asks of a server: `req.url` becomes
 * `/path?query` and the Host header the target's authority (the received one is ignored). Every
 * adapter calls it first, for every request, so routing, the gate and the handlers all see one
 * form whatever the framework. Returns whether it rewrote anything; an origin-form target costs
 * one character test.
 *
 * @example
 * toOriginForm(req); // 'http://api.example.com/api/v1/fees/now' → '/api/v1/fees/now', Host api.example.com
 */
export function toOriginForm(req: IncomingMessage): boolean {
  const url = req.url;
  if (url === undefined || url.charCodeAt(0) === 47 /* / */) return false;
  const absolute = ABSOLUTE_FORM.exec(url);
  if (!absolute) return false;
  const rest = absolute[3]!;
  req.url = rest.startsWith('/') ? rest : `/${rest}`;
  // Userinfo (`user:pass@`) is never part of a Host.
  const authority = absolute[2]!.replace(/^.*@/, '');
  if (authority) req.headers.host = authority;
  return true;
}
