import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildRawTx, faucetSpend, paymentScript } from '../../test/fixtures/raw-tx';
import { type MempoolSimulator, startMempoolSimulator } from '../simulator/server';
import { SnapshotValidationError } from '../snapshot/validate';
import { createCircuitBreaker } from './circuit-breaker';
import {
  BroadcastRejectedError,
  CircuitOpenError,
  UpstreamNotFoundError,
  UpstreamRateLimitedError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
} from './errors';
import { createMempoolSpaceClient, MEMPOOL_SPACE_SNAPSHOT_SCHEMA } from './mempool-space';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const noWait = { attempts: 3, baseDelayMs: 1, maxDelayMs: 5 };

describe('mempool.space adapter against the simulator', () => {
  let sim: MempoolSimulator;
  beforeAll(async () => {
    sim = await startMempoolSimulator({ scenario: 'calm', seed: 21 });
  });
  afterAll(async () => {
    await sim.close();
  });

  it('builds a validated snapshot from tiers, mempool, projected blocks and tip', async () => {
    const client = createMempoolSpaceClient({ baseUrl: sim.url });
    const snapshot = await client.fetchSnapshot({ now: () => Date.parse('2026-08-06T12:00:05Z') });
    expect(snapshot.snapshot_schema).toBe(MEMPOOL_SPACE_SNAPSHOT_SCHEMA);
    expect(snapshot.source).toBe(sim.url);
    expect(snapshot.fetched_at).toBe('2026-08-06T12:00:05.000Z');
    expect(snapshot.tip_height).toBe(sim.model.tipHeight());
    const precise = sim.model.recommendedFees(true);
    expect(snapshot.tiers).toEqual({
      fastest: precise.fastestFee,
      half_hour: precise.halfHourFee,
      hour: precise.hourFee,
      economy: precise.economyFee,
      minimum: precise.minimumFee,
    });
    expect(snapshot.mempool.count).toBe(sim.model.mempoolInfo().count);
    expect(snapshot.projected_blocks.length).toBe(sim.model.mempoolBlocks().length);
    expect(snapshot.snapshot_digest).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('uses the integer tiers when configured for recommended', async () => {
    const client = createMempoolSpaceClient({ baseUrl: sim.url, tiers: 'recommended' });
    const snapshot = await client.fetchSnapshot();
    expect(snapshot.tiers.fastest).toBe(sim.model.recommendedFees(false).fastestFee);
    expect(Number.isInteger(snapshot.tiers.fastest)).toBe(true);
  });

  it('gives the same digest for the same upstream state from two clients at different times', async () => {
    const a = await createMempoolSpaceClient({ baseUrl: sim.url }).fetchSnapshot({ now: () => 1_000 });
    const b = await createMempoolSpaceClient({ baseUrl: `${sim.url}/` }).fetchSnapshot({ now: () => 9_000 });
    expect(b.snapshot_digest).toBe(a.snapshot_digest);
    expect(b.fetched_at).not.toBe(a.fetched_at);
  });

  it('retries a 503 "Service Unavailable" and succeeds when the upstream recovers', async () => {
    sim.injectFault({ status: 503, count: 1, pathPrefix: '/api/mempool' });
    const client = createMempoolSpaceClient({ baseUrl: sim.url, retry: noWait });
    const before = sim.requestCount('/api/mempool');
    await expect(client.fetchMempool()).resolves.toMatchObject({ count: expect.any(Number) });
    expect(sim.requestCount('/api/mempool') - before).toBe(2);
  });

  it('throws a typed temporary error once retries are exhausted', async () => {
    sim.injectFault({ status: 503, count: 3, pathPrefix: '/api/v1/fees/precise' });
    const client = createMempoolSpaceClient({ baseUrl: sim.url, retry: noWait });
    const error = await client.fetchPreciseFees().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect((error as UpstreamUnavailableError).code).toBe('UPSTREAM_UNAVAILABLE');
    expect((error as UpstreamUnavailableError).status).toBe(503);
    expect((error as UpstreamUnavailableError).body).toBe('Service Unavailable');
    expect((error as UpstreamUnavailableError).retryable).toBe(true);
  });

  it('reports 429 as rate limited with the Retry-After delay', async () => {
    sim.injectFault({ status: 429, count: 1, pathPrefix: '/api/blocks/tip/height', retryAfterSeconds: 30 });
    const client = createMempoolSpaceClient({ baseUrl: sim.url, retry: noWait });
    const error = await client.fetchTipHeight().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamRateLimitedError);
    expect((error as UpstreamRateLimitedError).retryAfterMs).toBe(30_000);
  });

  it('retries a 429 whose Retry-After fits the backoff budget', async () => {
    sim.injectFault({ status: 429, count: 1, pathPrefix: '/api/blocks/tip/height', retryAfterSeconds: 0 });
    const client = createMempoolSpaceClient({ baseUrl: sim.url, retry: noWait });
    await expect(client.fetchTipHeight()).resolves.toBe(sim.model.tipHeight());
  });

  it('rejects the whole snapshot when the fee endpoints are out of sync', async () => {
    sim.setScenario('upstream-down');
    try {
      const client = createMempoolSpaceClient({ baseUrl: sim.url, retry: { attempts: 1 } });
      await expect(client.fetchSnapshot()).rejects.toBeInstanceOf(UpstreamUnavailableError);
      await expect(client.fetchTipHeight()).resolves.toBe(sim.model.tipHeight());
    } finally {
      sim.setScenario('calm');
    }
  });

  it('opens its circuit breaker after repeated outages', async () => {
    let now = 0;
    const breaker = createCircuitBreaker({ failureThreshold: 2, resetTimeoutMs: 60_000, now: () => now });
    const client = createMempoolSpaceClient({ baseUrl: sim.url, breaker, retry: { attempts: 1 } });
    sim.injectFault({ status: 503, count: 2, pathPrefix: '/api/mempool' });
    await expect(client.fetchMempool()).rejects.toBeInstanceOf(UpstreamUnavailableError);
    await expect(client.fetchMempool()).rejects.toBeInstanceOf(UpstreamUnavailableError);
    const before = sim.requestCount('/api/mempool');
    await expect(client.fetchMempool()).rejects.toBeInstanceOf(CircuitOpenError);
    expect(sim.requestCount('/api/mempool')).toBe(before);
    now += 60_000;
    await expect(client.fetchMempool()).resolves.toBeDefined();
    expect(breaker.state()).toBe('closed');
  });

  it('times out a silent upstream with a typed error', async () => {
    const { createServer } = await import('node:http');
    const silent = createServer(() => {
      // never answers
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    try {
      const client = createMempoolSpaceClient({
        baseUrl: `http://127.0.0.1:${port}`,
        timeoutMs: 100,
        retry: { attempts: 2, baseDelayMs: 1 },
      });
      const error = await client.fetchTipHeight().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UpstreamTimeoutError);
      expect((error as UpstreamTimeoutError).timeoutMs).toBe(100);
    } finally {
      silent.closeAllConnections();
      await new Promise((r) => silent.close(r));
    }
  });

  it('reads recent blocks, a block by hash and by height, and a transaction', async () => {
    const client = createMempoolSpaceClient({ baseUrl: sim.url });
    const blocks = await client.fetchRecentBlocks();
    expect(blocks).toHaveLength(15);
    expect(blocks[0]!.extras?.pool?.name).toEqual(expect.any(String));
    const older = await client.fetchRecentBlocks(blocks[5]!.height);
    expect(older[0]!.id).toBe(blocks[5]!.id);
    const hash = await client.fetchBlockHash(blocks[2]!.height);
    expect(hash).toBe(blocks[2]!.id);
    expect((await client.fetchBlock(hash)).height).toBe(blocks[2]!.height);
    const txid = sim.model.txidOfTx(sim.model.tip().txs[1]!);
    const tx = await client.fetchTransaction(txid);
    expect(tx.status.confirmed).toBe(true);
    expect(tx.vin.every((input) => input.prevout !== null)).toBe(true);
    expect(
      tx.vin.reduce((sum, i) => sum + i.prevout!.value, 0) - tx.vout.reduce((sum, o) => sum + o.value, 0),
    ).toBe(tx.fee);
  });

  it('reports unknown blocks and transactions as not found, without retrying', async () => {
    const client = createMempoolSpaceClient({ baseUrl: sim.url, retry: noWait });
    const path = `/api/tx/${'ab'.repeat(32)}`;
    const before = sim.requestCount(path);
    const error = await client.fetchTransaction('ab'.repeat(32)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamNotFoundError);
    expect((error as UpstreamNotFoundError).body).toBe('Transaction not found');
    expect(sim.requestCount(path) - before).toBe(1);
    await expect(client.fetchBlock('cd'.repeat(32))).rejects.toThrow('Block not found');
  });

  it('broadcasts a transaction and finds it in the mempool', async () => {
    const client = createMempoolSpaceClient({ baseUrl: sim.url });
    const spend = faucetSpend(sim.model, { output: 1 });
    const { txid } = await client.broadcastTransaction(spend.hex);
    expect(txid).toBe(spend.txid);
    const tx = await client.fetchTransaction(txid);
    expect(tx.status.confirmed).toBe(false);
  });

  it.each([
    ['json', 'sendrawtransaction RPC error: {"code":-26,"message":"dust"}'],
    ['code', 'sendrawtransaction RPC error -26: dust'],
  ] as const)('parses a %s-format broadcast rejection and keeps the raw text', async (format, raw) => {
    sim.setBroadcastErrorFormat(format);
    try {
      const client = createMempoolSpaceClient({ baseUrl: sim.url });
      const dust = faucetSpend(sim.model, {
        output: 2,
        outputs: [{ script: paymentScript(), value: 100n }],
      });
      const error = await client.broadcastTransaction(dust.hex).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BroadcastRejectedError);
      expect((error as BroadcastRejectedError).rpcCode).toBe(-26);
      expect((error as BroadcastRejectedError).reason).toBe('policy_rejected');
      expect((error as BroadcastRejectedError).raw).toBe(raw);
    } finally {
      sim.setBroadcastErrorFormat('json');
    }
  });

  it('maps decode failures to -22, missing inputs to -25 and a cheaper double spend to -26', async () => {
    const client = createMempoolSpaceClient({ baseUrl: sim.url });
    await expect(client.broadcastTransaction('00ff')).rejects.toMatchObject({
      rpcCode: -22,
      reason: 'decode_failed',
    });
    await expect(client.broadcastTransaction(buildRawTx({ inputTxidByte: 0x44 }))).rejects.toMatchObject({
      rpcCode: -25,
      reason: 'missing_or_spent_inputs',
    });
    const first = faucetSpend(sim.model, { output: 3, fee: 5_000n });
    await client.broadcastTransaction(first.hex);
    const cheaper = faucetSpend(sim.model, { output: 3, fee: 4_000n });
    await expect(client.broadcastTransaction(cheaper.hex)).rejects.toMatchObject({
      rpcCode: -26,
      reason: 'policy_rejected',
    });
  });

  it('rejects a snapshot whose figures break the rules', async () => {
    const { createServer } = await import('node:http');
    const bad = createServer((req, res) => {
      const bodies: Record<string, string> = {
        '/api/v1/fees/precise': '{"fastestFee":2,"halfHourFee":3,"hourFee":1,"economyFee":1,"minimumFee":1}',
        '/api/mempool': '{"count":1,"vsize":200,"total_fee":400,"fee_histogram":[]}',
        '/api/v1/fees/mempool-blocks': '[]',
        '/api/blocks/tip/height': '910000',
      };
      const body = bodies[req.url ?? ''];
      res.writeHead(body ? 200 : 404).end(body ?? 'Not Found');
    });
    await new Promise<void>((r) => bad.listen(0, '127.0.0.1', r));
    try {
      const client = createMempoolSpaceClient({
        baseUrl: `http://127.0.0.1:${(bad.address() as { port: number }).port}`,
      });
      const error = await client.fetchSnapshot().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SnapshotValidationError);
      expect((error as SnapshotValidationError).problems.join()).toMatch(/fastest 2 < half_hour 3/);
    } finally {
      await new Promise((r) => bad.close(r));
    }
  });
});
