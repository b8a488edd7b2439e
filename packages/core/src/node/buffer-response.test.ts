import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeGateResponse } from './buffer-response';

const every = Uint8Array.from({ length: 256 }, (_, i) => i);
const large = new Uint8Array(70 * 1024).map((_, i) => (i * 7) % 256);

describe('writeGateResponse', () => {
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      const body = req.url === '/large' ? large : every;
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
  ])('sends exactly the bytes of %s', async (_name, path, expected) => {
    const response = await fetch(`${url}${path}`);
    expect(response.status).toBe(402);
    expect(response.headers.get('content-length')).toBe(String(expected.byteLength));
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(expected);
  });
});
