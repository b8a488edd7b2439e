import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { GateResponse, HandlerResponse, RequestView } from '../http/types';
import { applyGateHeaders, type HeaderTarget, sendableBody, toHandlerHeaders } from './adapter-helpers';
import { peekRequestBody } from './peek-body';

/** A handler response being captured from a Node `ServerResponse`. */
export interface ResponseCapture {
  /** Resolves when the handler calls `end()`, with what it would have sent. */
  readonly done: Promise<HandlerResponse>;
  /** Whether `end()` was called. */
  readonly ended: boolean;
  /** Puts the original methods back (done automatically before `done` resolves). */
  restore(): void;
}

type Callback = (error?: Error | null) => void;

function toBuffer(chunk: unknown, encoding?: unknown): Buffer | undefined {
  if (chunk === undefined || chunk === null || typeof chunk === 'function') return undefined;
  if (typeof chunk === 'string')
    return Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  return Buffer.from(String(chunk));
}

/**
 * Buffers everything a handler writes to a Node `ServerResponse` (`writeHead`, `setHeader`,
 * `write`, `end`) without sending any of it, so the payment gate can settle first and then
 * decide what is sent. Express and Koa adapters use it.
 *
 * @example
 * const capture = captureResponse(res);
 * next();
 * const handled = await capture.done;
 * writeGateResponse(res, await outcome.settle(handled));
 */
export function captureResponse(res: ServerResponse): ResponseCapture {
  const chunks: Buffer[] = [];
  const original = {
    writeHead: res.writeHead,
    write: res.write,
    end: res.end,
    flushHeaders: res.flushHeaders,
  };
  let ended = false;
  let resolve!: (value: HandlerResponse) => void;
  const done = new Promise<HandlerResponse>((r) => {
    resolve = r;
  });
  const restore = () => {
    res.writeHead = original.writeHead;
    res.write = original.write;
    res.end = original.end;
    res.flushHeaders = original.flushHeaders;
  };

  res.writeHead = function writeHead(this: ServerResponse, status: number, ...rest: unknown[]) {
    res.statusCode = status;
    const headers = rest.find((arg) => typeof arg === 'object' && arg !== null) as
      | OutgoingHttpHeaders
      | readonly string[]
      | undefined;
    if (Array.isArray(headers)) {
      for (let i = 0; i + 1 < headers.length; i += 2)
        res.setHeader(headers[i] as string, headers[i + 1] as string);
    } else if (headers) {
      for (const [name, value] of Object.entries(headers)) {
        if (value !== undefined) res.setHeader(name, value as string | string[] | number);
      }
    }
    return res;
  } as ServerResponse['writeHead'];
  res.flushHeaders = () => {};
  res.write = ((chunk: unknown, encoding?: unknown, callback?: unknown) => {
    const buffer = toBuffer(chunk, encoding);
    if (buffer) chunks.push(buffer);
    const cb = (typeof encoding === 'function' ? encoding : callback) as Callback | undefined;
    if (cb) process.nextTick(cb);
    return true;
  }) as ServerResponse['write'];
  res.end = ((chunk?: unknown, encoding?: unknown, callback?: unknown) => {
    if (ended) return res;
    ended = true;
    const buffer = toBuffer(chunk, encoding);
    if (buffer) chunks.push(buffer);
    const cb = [chunk, encoding, callback].find((arg) => typeof arg === 'function') as Callback | undefined;
    restore();
    resolve({
      status: res.statusCode,
      headers: toHandlerHeaders(res.getHeaders()),
      body: Buffer.concat(chunks),
    });
    if (cb) process.nextTick(cb);
    return res;
  }) as ServerResponse['end'];

  return {
    done,
    get ended() {
      return ended;
    },
    restore,
  };
}

/** {@link applyGateHeaders}' view of a Node `ServerResponse`. */
export function nodeHeaderTarget(res: ServerResponse): HeaderTarget {
  return {
    names: () => res.getHeaderNames(),
    get: (name) => res.getHeader(name),
    remove: (name) => res.removeHeader(name),
    set: (name, value) => res.setHeader(name, value),
  };
}

/**
 * Writes a gate response to a Node `ServerResponse`. Headers set before the gate ran are kept
 * (see {@link applyGateHeaders}; pass `before`, the names set before the handler ran, when the
 * handler may have set headers of its own).
 */
export function writeGateResponse(
  res: ServerResponse,
  response: GateResponse,
  before?: ReadonlySet<string>,
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  applyGateHeaders(nodeHeaderTarget(res), response, before);
  res.statusCode = response.status;
  res.end(sendableBody(response.body));
}

export interface NodeRequestViewOptions {
  /** `http` or `https`; default from the socket (TLS or not). */
  protocol?: string;
  /** Host (and port); default the `Host` header. */
  host?: string;
  /** The request target as received; default `req.url`. */
  url?: string;
}

/** Builds the gate's `RequestView` from a Node request, the URL absolute but not decoded. */
export function toRequestView(req: IncomingMessage, options: NodeRequestViewOptions = {}): RequestView {
  const target = options.url ?? req.url ?? '/';
  const protocol = options.protocol ?? ((req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http');
  const host = options.host ?? req.headers.host ?? 'localhost';
  // An absolute-form target (`GET http://other/path`) is put behind our own origin; the gate
  // strips it again and matches its path, so it cannot reach a paid handler unchallenged.
  const url = `${protocol}://${host}${target.startsWith('/') ? '' : '/'}${target}`;
  return {
    method: (req.method ?? 'GET').toUpperCase(),
    url,
    header(name) {
      const value = req.headers[name.toLowerCase()];
      return Array.isArray(value) ? value.join(', ') : value;
    },
    raw: req,
    body: (maxBytes) => peekRequestBody(req, maxBytes),
  };
}
