import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { TollboothError } from '../errors/tollbooth-error';
import { FacilitatorError } from './facilitator-error';
import { createHttpFacilitatorClient } from './http-facilitator-client';

type Script = (req: IncomingMessage, body: string, res: ServerResponse) => void;

let server: Server;
let url: string;
let script: Script;
const seen: Array<{ method?: string; url?: string; headers: IncomingMessage['headers']; body: string }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body });
      script(req, body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/facilitator/`;
});
afterAll(() => {
  server.closeAllConnections();
  return new Promise<void>((resolve) => server.close(() => resolve()));
});
beforeEach(() => {
  seen.length = 0;
});

const json =
  (status: number, value: unknown): Script =>
  (_req, _body, res) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
  };

const payload = { x402Version: 2 as const, accepted: {} as never, payload: {} };
const requirements = {
  scheme: 'exact',
  network: 'eip155:8453',
  amount: '1',
  asset: 'a',
  payTo: 'b',
  maxTimeoutSeconds: 60,
};

async function kindOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof FacilitatorError) return error.kind;
    throw error;
  }
  return undefined;
}

describe('createHttpFacilitatorClient', () => {
  it('posts the standard verify body with per-operation auth headers', async () => {
    script = json(200, { isValid: true, payer: '0xP' });
    const client = createHttpFacilitatorClient({
      url,
      createAuthHeaders: (op) => ({ authorization: `Bearer ${op}` }),
    });
    await expect(client.verify(payload, requirements)).resolves.toMatchObject({
      isValid: true,
      payer: '0xP',
    });
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/facilitator/verify' });
    expect(seen[0]!.headers['authorization']).toBe('Bearer verify');
    expect(JSON.parse(seen[0]!.body)).toEqual({
      x402Version: 2,
      paymentPayload: payload,
      paymentRequirements: requirements,
    });
  });

  it('returns a failed verify as a definitive answer, also from a 400 with a VerifyResponse body', async () => {
    const client = createHttpFacilitatorClient({ url });
    script = json(200, { isValid: false, invalidReason: 'invalid_exact_evm_signature', payer: null });
    await expect(client.verify(payload, requirements)).resolves.toMatchObject({
      isValid: false,
      payer: undefined,
    });
    script = json(400, { isValid: false, invalidReason: 'invalid_exact_evm_insufficient_balance' });
    await expect(client.verify(payload, requirements)).resolves.toMatchObject({
      invalidReason: 'invalid_exact_evm_insufficient_balance',
    });
  });

  it('returns a settlement', async () => {
    script = json(200, { success: true, transaction: '0xabc', network: 'eip155:8453', payer: '0xP' });
    const client = createHttpFacilitatorClient({ url });
    await expect(client.settle(payload, requirements)).resolves.toMatchObject({
      success: true,
      transaction: '0xabc',
    });
    expect(seen[0]!.url).toBe('/facilitator/settle');
  });

  it.each([
    ['http-5xx', json(503, { error: 'down' })],
    ['invalid-response', json(200, { hello: 'world' })],
    ['invalid-response', ((_q, _b, res) => res.writeHead(200).end('<html>')) as Script],
    ['invalid-response', json(401, { error: 'unauthorized' })],
    ['network', ((req) => req.socket.destroy()) as Script],
  ])('throws a FacilitatorError of kind %s when the answer is not definitive', async (kind, answer) => {
    script = answer;
    const client = createHttpFacilitatorClient({ url });
    expect(await kindOf(client.settle(payload, requirements))).toBe(kind);
  });

  it('throws a timeout FacilitatorError when the facilitator does not answer in time', async () => {
    script = () => {};
    const client = createHttpFacilitatorClient({ url, timeoutMs: 100 });
    expect(await kindOf(client.verify(payload, requirements))).toBe('timeout');
  });

  it('memoises /supported and retries it after a failure with backoff', async () => {
    // Only Date is faked: the backoff is read from it, while the HTTP calls run on real timers.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const start = Date.now();
      const client = createHttpFacilitatorClient({ url, supportedRetryMs: 150 });
      script = json(500, {});
      expect(await kindOf(client.supported())).toBe('http-5xx');
      script = json(200, {
        kinds: [{ x402Version: 2, scheme: 'exact', network: 'eip155:8453' }],
        signers: {},
      });
      // Within the backoff the last failure is reported without a request.
      vi.setSystemTime(start + 149);
      expect(await kindOf(client.supported())).toBe('http-5xx');
      expect(seen).toHaveLength(1);
      vi.setSystemTime(start + 150);
      const first = await client.supported();
      expect(first.kinds[0]!.network).toBe('eip155:8453');
      expect(first.extensions).toEqual([]);
      await client.supported();
      expect(seen).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('doubles the /supported backoff after each failure in a row', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const start = Date.now();
      const client = createHttpFacilitatorClient({ url, supportedRetryMs: 100 });
      script = json(503, {});
      expect(await kindOf(client.supported())).toBe('http-5xx');
      vi.setSystemTime(start + 100);
      expect(await kindOf(client.supported())).toBe('http-5xx');
      expect(seen).toHaveLength(2);
      // The second failure waits 200 ms: at +299 still no request, at +300 one.
      vi.setSystemTime(start + 299);
      expect(await kindOf(client.supported())).toBe('http-5xx');
      expect(seen).toHaveLength(2);
      vi.setSystemTime(start + 300);
      expect(await kindOf(client.supported())).toBe('http-5xx');
      expect(seen).toHaveLength(3);
    } finally {
      vi.useRealTimers();
    }
  });

  it('reports invalid options at construction', () => {
    expect(() => createHttpFacilitatorClient({ url: 'nope', timeoutMs: -1 })).toThrow(TollboothError);
  });
});

describe('a facilitator the request never reached', () => {
  it('marks a refused connection unreached, and a timeout not', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const refused = createHttpFacilitatorClient({ url: `http://127.0.0.1:${port}` });
    const error = await refused.settle(payload, requirements).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FacilitatorError);
    expect(error).toMatchObject({ kind: 'network', operation: 'settle', unreached: true });

    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const slow = createHttpFacilitatorClient({
        url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
        settleTimeoutMs: 50,
      });
      const lost = await slow.settle(payload, requirements).catch((e: unknown) => e);
      expect(lost).toMatchObject({ kind: 'timeout', unreached: false });
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});
