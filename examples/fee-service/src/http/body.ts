import { IncomingMessage } from 'node:http';
import { errorResult } from './respond';
import { MAX_REQUEST_BODY_BYTES, type RouteResult } from './types';

/** Thrown by {@link readRequestBody} past its limit. */
export class RequestBodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`request body larger than ${limit} bytes`);
    this.name = 'RequestBodyTooLargeError';
  }
}

const BODY = Symbol('fee-service.body');
type WithBody = IncomingMessage & { [BODY]?: Promise<Buffer> };

/**
 * Reads a request's body once and keeps the promise on the request: a paid route's precondition
 * reads it in the gate (to validate it before any challenge; the handler then takes the parsed
 * input, `keepParsedInput`), a free route's handler reads it itself. A
 * declared or actual length past `limit` rejects with {@link RequestBodyTooLargeError} without
 * buffering the rest (Node discards it when the response ends).
 */
export function readRequestBody(req: IncomingMessage, limit = MAX_REQUEST_BODY_BYTES): Promise<Buffer> {
  const held = req as WithBody;
  held[BODY] ??= new Promise<Buffer>((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      reject(new RequestBodyTooLargeError(limit));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.off('end', onEnd);
        req.resume();
        reject(new RequestBodyTooLargeError(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      const body = Buffer.concat(chunks, size);
      // The stream is consumed now: the gate fingerprints a payment identifier's request from
      // `req.body` (docs/payment-identifier.md#the-request-fingerprint), so the bytes stay there.
      (req as { body?: unknown }).body = body;
      resolve(body);
    };
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', reject);
  });
  return held[BODY];
}

const PARSED = Symbol('fee-service.parsedInput');
type WithParsed = IncomingMessage & { [PARSED]?: unknown };

/**
 * Keeps on the request what a paid route's precondition parsed of it (in the gate, before any
 * challenge), so its handler takes it as it is: the input is validated and the body read once.
 */
export function keepParsedInput(req: IncomingMessage, parsed: unknown): void {
  (req as WithParsed)[PARSED] = parsed;
}

/** What {@link keepParsedInput} kept on the request, if anything. */
export function parsedInputOf(req: IncomingMessage): unknown {
  return (req as WithParsed)[PARSED];
}

/**
 * The Node request under a framework's own request object, as the gate's `RequestView.raw` holds
 * it: Express's request is one, Fastify's has it as `.raw`, Koa's context as `.req`.
 */
export function incomingMessageOf(raw: unknown): IncomingMessage | undefined {
  if (raw instanceof IncomingMessage) return raw;
  const wrapper = raw as { raw?: unknown; req?: unknown } | undefined;
  const inner = wrapper?.raw ?? wrapper?.req;
  return inner instanceof IncomingMessage ? inner : undefined;
}

/** The answer to a body that could not be read: 413 when too large, else 400. Before any challenge. */
export function bodyError(error: unknown, requestId: string): RouteResult {
  if (error instanceof RequestBodyTooLargeError) {
    return errorResult({ status: 413, code: 'payload_too_large', requestId, retryable: false });
  }
  return errorResult({
    status: 400,
    code: 'invalid_request',
    requestId,
    retryable: false,
    message: 'body: the request body could not be read',
  });
}
