import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendableBody } from './adapter-helpers';
import { writeGateResponse } from './buffer-response';

const every = Uint8Array.from({ length: 256 }, (_, i) => i);
const large = new Uint8Array(70 * 1024).map((_, i) => (i * 7) % 256);
const json = Buffer.from(JSON.stringify({ x402Version: 2, error: 'payment_required', accepts: [] }));

describe('writeGateResponse', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      const body = req.url === '/large' ? large : req.url === '/json' ? json : every;
      writeGateResponse(res, { status: 402, headers: { 'content-type': 'application/octet-stream' }, body });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it.each([
    ['a small body', '/small', every],
    ['a large body', '/large', large],
    ['a small ASCII body (sent as a string)', '/json', new Uint8Array(json)],
  ])('sends exactly the bytes of %s', async (_name, path, expected) => {
    const response = await fetch(`${url}${path}`);
    expect(response.status).toBe(402);
    expect(response.headers.get('content-length')).toBe(String(expected.byteLength));
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(expected);
  });
});

describe('sendableBody', () => {
  it('gives a small ASCII body as a string and anything else as the same bytes', () => {
    expect(sendableBody(json)).toBe(json.toString('utf8'));
    expect(sendableBody(new Uint8Array())).toBe('');
    expect(Buffer.isBuffer(sendableBody(every))).toBe(true);
    expect(Buffer.isBuffer(sendableBody(Buffer.alloc(16 * 1024 + 1, 0x61)))).toBe(true);
    expect(sendableBody(Buffer.alloc(16 * 1024, 0x61))).toHaveLength(16 * 1024);
  });

  it('always stands for exactly the body bytes, whichever form it takes', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 300 }),
          fc.string({ maxLength: 300 }).map((text) => new TextEncoder().encode(text)),
          fc.string({ unit: 'grapheme', maxLength: 100 }).map((text) => new TextEncoder().encode(text)),
        ),
        (bytes) => {
          const sendable = sendableBody(bytes);
          // Frameworks write a string as UTF-8 and count its length with Buffer.byteLength.
          const sent = typeof sendable === 'string' ? Buffer.from(sendable, 'utf8') : sendable;
          expect(new Uint8Array(sent)).toEqual(new Uint8Array(bytes));
          if (typeof sendable === 'string') expect(Buffer.byteLength(sendable)).toBe(bytes.byteLength);
        },
      ),
    );
  });
});
