import type { IncomingMessage } from 'node:http';
import { TollboothError } from '../errors/tollbooth-error';

/** Whether a request has a body at all (RFC 9112 section 6: a length, or a transfer coding). */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** The stream state Node keeps on every readable: `ended` once the last byte was pushed. */
type WithState = IncomingMessage & { _readableState?: { ended?: boolean } };

/**
 * Reads a request's whole body **without consuming it**: once read, the bytes are put back at the
 * front of the stream (before it reports its end), so a body parser or handler that runs later
 * reads the same body. The gate reads the body this way only for a payment that carries an
 * identifier, whose request fingerprint includes a hash of the body.
 *
 * A body that a parser already consumed (one mounted before the gate) cannot be read again:
 * it is taken from `req.body` when that holds bytes or a string, and otherwise hashed as its JSON.
 *
 * @throws TollboothError `request_body_too_large` past `maxBytes` (the stream is left as it is).
 */
export function peekRequestBody(req: IncomingMessage, maxBytes: number): Promise<Uint8Array> {
  if (req.readableEnded || (req.readableDidRead && !req.readable)) {
    return Promise.resolve(consumedBody((req as { body?: unknown }).body));
  }
  if (!hasBody(req)) return Promise.resolve(new Uint8Array());
  const state = (req as WithState)._readableState;
  return new Promise<Uint8Array>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('readable', onReadable);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const putBack = () => {
      if (size > 0) req.unshift(Buffer.concat(chunks, size));
    };
    const onReadable = () => {
      for (;;) {
        const chunk = req.read() as Buffer | null;
        if (chunk === null) break;
        chunks.push(chunk);
        size += chunk.length;
        if (size > maxBytes) {
          cleanup();
          putBack();
          reject(
            new TollboothError(
              'request_body_too_large',
              `the request body is over ${maxBytes} bytes, the most the gate fingerprints`,
            ),
          );
          return;
        }
      }
      // The last byte is in: put everything back in the same tick, before the stream can report
      // its end, so the next reader sees the whole body and then the end.
      if (state?.ended) {
        cleanup();
        const body = Buffer.concat(chunks, size);
        putBack();
        resolve(new Uint8Array(body.buffer, body.byteOffset, body.byteLength));
      }
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onClose = () => {
      cleanup();
      reject(new Error('the request closed before its body was read'));
    };
    req.on('readable', onReadable);
    req.once('error', onError);
    req.once('close', onClose);
  });
}

function consumedBody(body: unknown): Uint8Array {
  if (body === undefined || body === null) return new Uint8Array();
  if (body instanceof Uint8Array) return body;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  return Buffer.from(JSON.stringify(body), 'utf8');
}
