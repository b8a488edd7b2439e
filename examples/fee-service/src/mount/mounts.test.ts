import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { createPaymentGate, type TollboothGate } from '@tollbooth/core';
import { createScriptedFacilitator, createSimpleScheme, TEST_PAY_TO } from '@tollbooth/core/testing';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EncodedJson } from '../http/respond';
import type { RouteResult } from '../http/types';
import { createEdge } from '../resources/edge';
import { buildTestEnvironment } from '../resources/testing';
import { mountExpress } from './express';
import { mountFastify } from './fastify';
import { mountKoa } from './koa';
import type { MountedApp } from './types';

/**
 * How the mounts wrote a result before JSON could be sent as text: JSON and encoded JSON as a
 * UTF-8 `Buffer` with the JSON content type added when missing, bytes as they are.
 */
function asWrittenBefore(result: RouteResult): RouteResult {
  const headers: Record<string, string> = { ...result.headers };
  const { body } = result;
  if (body === undefined || body instanceof Uint8Array) return { status: result.status, headers, body };
  headers['content-type'] ??= 'application/json; charset=utf-8';
  const text = body instanceof EncodedJson ? body.text : JSON.stringify(body);
  return { status: result.status, headers, body: Buffer.from(text, 'utf8') };
}

/** One raw HTTP/1.1 exchange on a fresh connection: the response bytes exactly as received. */
function rawGet(port: number, path: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.end(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
    });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('end', () => resolve(Buffer.concat(chunks)));
    socket.on('error', reject);
  });
}

/** The response without its `Date` header (the only part that may differ between two answers). */
const withoutDate = (raw: Buffer) => raw.toString('latin1').replace(/\r\nDate: [^\r]*/i, '');

const MOUNTS = { fastify: mountFastify, express: mountExpress, koa: mountKoa } as const;

const headersArb = fc.record(
  {
    'cache-control': fc.constantFrom('public, max-age=5', 'no-store'),
    'x-request-id': fc.stringMatching(/^[A-Za-z0-9._:-]{1,20}$/),
    'content-type': fc.constantFrom(
      'application/json; charset=utf-8',
      'application/json',
      'application/problem+json',
      'text/plain; charset=utf-8',
    ),
    'retry-after': fc.constantFrom('10', '1'),
  },
  { requiredKeys: [] },
);
const resultArb = fc.record({
  status: fc.constantFrom(200, 201, 400, 402, 404, 429, 503),
  headers: fc.option(headersArb, { nil: undefined }),
  body: fc.oneof(
    fc.jsonValue(),
    fc.jsonValue().map((value) => new EncodedJson(JSON.stringify(value))),
    fc.string({ unit: 'binary' }).map((text) => new EncodedJson(JSON.stringify({ text }))),
    fc.uint8Array({ maxLength: 64 }),
    fc.constant(undefined),
  ),
});

describe.each(Object.keys(MOUNTS) as (keyof typeof MOUNTS)[])('the %s mount', (framework) => {
  let gate: TollboothGate;
  let mounted: MountedApp;
  let server: Server;
  let port: number;
  let current: RouteResult = { status: 200 };

  beforeAll(async () => {
    gate = createPaymentGate({
      routes: { 'GET /paid': { accepts: { network: 'eip155:8453', payTo: TEST_PAY_TO, price: '$0.001' } } },
      schemes: [createSimpleScheme()],
      facilitator: createScriptedFacilitator(),
    });
    mounted = await MOUNTS[framework]({
      routes: [
        { method: 'GET', path: '/now', handler: () => current },
        { method: 'GET', path: '/before', handler: () => asWrittenBefore(current) },
      ],
      gate,
      edge: createEdge({ gate, publications: [], env: buildTestEnvironment() }),
      rateLimit: { enabled: false, max: 1, windowMs: 1000 },
      trustProxy: false,
    });
    server = createServer(mounted.listener);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await mounted?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('writes every result (encoded JSON text, JSON, bytes, none) byte for byte as it did with buffers', async () => {
    await fc.assert(
      fc.asyncProperty(resultArb, async (result) => {
        current = result;
        const now = await rawGet(port, '/now');
        const before = await rawGet(port, '/before');
        expect(withoutDate(now)).toBe(withoutDate(before));
      }),
      { numRuns: 60 },
    );
  });

  it('challenges the paid route and passes the free ones', async () => {
    current = { status: 200, body: new EncodedJson('{"ok":true}') };
    expect(withoutDate(await rawGet(port, '/paid'))).toMatch(/^HTTP\/1\.1 402 /);
    const free = withoutDate(await rawGet(port, '/now'));
    expect(free).toMatch(/^HTTP\/1\.1 200 /);
    expect(free.endsWith('\r\n\r\n{"ok":true}')).toBe(true);
  });
});
