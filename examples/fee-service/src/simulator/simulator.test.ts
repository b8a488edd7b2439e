import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPrng } from './prng';
import { type MempoolSimulator, startMempoolSimulator } from './server';

// The root config's 30 s timeouts are not inherited by the unit project; simulators are CPU-bound.
vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const PATHS = [
  '/api/v1/fees/recommended',
  '/api/v1/fees/precise',
  '/api/v1/fees/mempool-blocks',
  '/api/mempool',
  '/api/fee-estimates',
  '/api/blocks/tip/height',
  '/api/v1/blocks',
];

async function snapshotOf(sim: MempoolSimulator): Promise<string[]> {
  return Promise.all(PATHS.map(async (p) => (await fetch(sim.url + p)).text()));
}
const getJson = async <T>(url: string): Promise<T> => (await fetch(url)).json() as Promise<T>;

describe('prng', () => {
  it('repeats its sequence for a seed and differs across seeds', () => {
    const a = createPrng(1);
    const b = createPrng(1);
    const c = createPrng(2);
    const seqA = Array.from({ length: 5 }, () => a.next());
    expect(Array.from({ length: 5 }, () => b.next())).toEqual(seqA);
    expect(Array.from({ length: 5 }, () => c.next())).not.toEqual(seqA);
    expect(seqA.every((x) => x >= 0 && x < 1)).toBe(true);
  });

  it('draws exponential intervals with the requested mean', () => {
    const rng = createPrng(9);
    const n = 20_000;
    let sum = 0;
    for (let i = 0; i < n; i += 1) sum += rng.exponential(600);
    expect(sum / n).toBeGreaterThan(580);
    expect(sum / n).toBeLessThan(620);
  });
});

describe('mempool simulator', () => {
  const sims: MempoolSimulator[] = [];
  const start = async (...args: Parameters<typeof startMempoolSimulator>) => {
    const sim = await startMempoolSimulator(...args);
    sims.push(sim);
    return sim;
  };
  afterAll(async () => {
    await Promise.all(sims.map((s) => s.close()));
  });

  it('answers identically for the same seed and differently for another seed', async () => {
    const [a, b, c] = await Promise.all([start({ seed: 42 }), start({ seed: 42 }), start({ seed: 43 })]);
    const [sa, sb, sc] = await Promise.all([snapshotOf(a), snapshotOf(b), snapshotOf(c)]);
    expect(sb).toEqual(sa);
    expect(sc).not.toEqual(sa);
    a.advance(3_600_000);
    b.advance(3_600_000);
    expect(await snapshotOf(b)).toEqual(await snapshotOf(a));
  });

  describe('scenarios', () => {
    it('calm: a small mempool, low integer tiers ≥ 1, at most 3 projected blocks', async () => {
      const sim = await start({ scenario: 'calm', seed: 5 });
      const fees = await getJson<Record<string, number>>(`${sim.url}/api/v1/fees/recommended`);
      const blocks = await getJson<unknown[]>(`${sim.url}/api/v1/fees/mempool-blocks`);
      expect(blocks.length).toBeLessThanOrEqual(3);
      expect(fees.fastestFee).toBeLessThanOrEqual(10);
      for (const v of Object.values(fees)) {
        expect(Number.isInteger(v)).toBe(true);
        expect(v).toBeGreaterThanOrEqual(1);
      }
    });

    it('backlog: 8 projected blocks whose last is a stack above 1,000,000 vB and a mempool over 8 MvB', async () => {
      const sim = await start({ scenario: 'backlog', seed: 5 });
      const blocks = await getJson<{ blockVSize: number; medianFee: number; feeRange: number[] }[]>(
        `${sim.url}/api/v1/fees/mempool-blocks`,
      );
      const mempool = await getJson<{ vsize: number; count: number; fee_histogram: [number, number][] }>(
        `${sim.url}/api/mempool`,
      );
      expect(blocks).toHaveLength(8);
      expect(blocks[7]!.blockVSize).toBeGreaterThan(1_000_000);
      expect(blocks.slice(0, 7).every((b) => b.blockVSize <= 1_000_000)).toBe(true);
      expect(mempool.vsize).toBeGreaterThan(8_000_000);
      expect(mempool.fee_histogram.length).toBeGreaterThan(10);
      sim.advance(2 * 3_600_000);
      const later = await getJson<unknown[]>(`${sim.url}/api/v1/fees/mempool-blocks`);
      expect(later).toHaveLength(8);
    });

    it('spike: a steep curve — fastest at least 5 × economy and above 30 sat/vB', async () => {
      const sim = await start({ scenario: 'spike', seed: 5 });
      const fees = await getJson<Record<string, number>>(`${sim.url}/api/v1/fees/recommended`);
      expect(fees.fastestFee).toBeGreaterThan(30);
      expect(fees.fastestFee).toBeGreaterThanOrEqual(5 * fees.economyFee!);
    });

    it('sub-sat: precise fastest below 1 with a 0.1 floor while recommended stays at 1', async () => {
      const sim = await start({ scenario: 'sub-sat', seed: 5 });
      const precise = await getJson<Record<string, number>>(`${sim.url}/api/v1/fees/precise`);
      const recommended = await getJson<Record<string, number>>(`${sim.url}/api/v1/fees/recommended`);
      expect(precise.fastestFee).toBeLessThan(1);
      expect(precise.fastestFee).toBeGreaterThan(0.1);
      expect(precise.minimumFee).toBe(0.1);
      expect(String(precise.fastestFee).split('.')[1]?.length ?? 0).toBeLessThanOrEqual(3);
      expect(recommended.fastestFee).toBe(1);
    });

    it('upstream-down: fee endpoints answer 503 Service Unavailable while the tip still answers', async () => {
      const sim = await start({ scenario: 'upstream-down', seed: 5 });
      for (const path of [
        '/api/v1/fees/recommended',
        '/api/v1/fees/precise',
        '/api/mempool',
        '/api/v1/fees/mempool-blocks',
      ]) {
        const response = await fetch(sim.url + path);
        expect(response.status).toBe(503);
        expect(await response.text()).toBe('Service Unavailable');
      }
      expect((await fetch(`${sim.url}/api/blocks/tip/height`)).status).toBe(200);
    });
  });

  describe('chain and quirks', () => {
    let sim: MempoolSimulator;
    beforeAll(async () => {
      sim = await start({ scenario: 'calm', seed: 11 });
    });

    it('mines blocks at exponential intervals averaging about ten minutes', () => {
      const before = sim.model.tipHeight();
      const startMs = sim.model.nowMs;
      sim.advance(24 * 3_600_000);
      const mined = sim.model.blocks.filter((b) => b.timestampMs > startMs);
      expect(mined.length).toBe(sim.model.tipHeight() - before);
      expect(mined.length).toBeGreaterThan(100);
      expect(mined.length).toBeLessThan(190);
      const gaps = mined.slice(1).map((b, i) => b.timestampMs - mined[i]!.timestampMs);
      expect(Math.max(...gaps)).toBeGreaterThan(1_200_000); // exponential: long gaps happen
      expect(Math.min(...gaps)).toBeLessThan(120_000);
    });

    it('serves 15 recent blocks with extras and real-looking hashes', async () => {
      const blocks = await getJson<
        { id: string; height: number; extras: { feeRange: number[]; pool: { name: string } } }[]
      >(`${sim.url}/api/v1/blocks`);
      expect(blocks).toHaveLength(15);
      expect(blocks[0]!.height).toBe(sim.model.tipHeight());
      expect(blocks[0]!.id).toMatch(/^0{19}[0-9a-f]{45}$/);
      expect(blocks[0]!.extras.feeRange).toHaveLength(7);
      const hash = await (await fetch(`${sim.url}/api/block-height/${blocks[3]!.height}`)).text();
      expect(hash).toBe(blocks[3]!.id);
      const block = await getJson<{ id: string }>(`${sim.url}/api/block/${hash}`);
      expect(block.id).toBe(hash);
    });

    it('looks up transactions it generated, with inputs summing to outputs plus fee', async () => {
      const tip = sim.model.tip();
      const txid = sim.model.txidOfTx(tip.txs[0]!);
      const tx = await getJson<{
        txid: string;
        fee: number;
        vin: { prevout: { value: number } }[];
        vout: { value: number }[];
        status: { confirmed: boolean; block_height: number };
      }>(`${sim.url}/api/tx/${txid}`);
      expect(tx.txid).toBe(txid);
      expect(tx.status).toMatchObject({ confirmed: true, block_height: tip.height });
      const inSum = tx.vin.reduce((s, i) => s + i.prevout.value, 0);
      const outSum = tx.vout.reduce((s, o) => s + o.value, 0);
      expect(inSum - outSum).toBe(tx.fee);
      const missing = await fetch(`${sim.url}/api/tx/${'0'.repeat(64)}`);
      expect(missing.status).toBe(404);
      expect(await missing.text()).toBe('Transaction not found');
      const noBlock = await fetch(`${sim.url}/api/block/${'0'.repeat(64)}`);
      expect(await noBlock.text()).toBe('Block not found');
    });

    it('answers the deprecated /api/fee-estimates with 203', async () => {
      const response = await fetch(`${sim.url}/api/fee-estimates`);
      expect(response.status).toBe(203);
      const body = (await response.json()) as Record<string, number>;
      expect(body['1']).toBeGreaterThan(0);
      expect(body['11']).toBeUndefined();
    });

    it('answers an injected 429 with Retry-After, then recovers', async () => {
      sim.injectFault({ status: 429, count: 1, retryAfterSeconds: 1 });
      const limited = await fetch(`${sim.url}/api/mempool`);
      expect(limited.status).toBe(429);
      expect(limited.headers.get('retry-after')).toBe('1');
      expect((await fetch(`${sim.url}/api/mempool`)).status).toBe(200);
    });

    it('moves time on its own when given a time scale', async () => {
      const fast = await start({ scenario: 'calm', seed: 2, timeScale: 2_400 }); // 250 ms tick = 10 min
      const before = fast.model.tipHeight();
      // Waits for the clock's own ticks, however slowly a loaded machine runs them (the test's
      // timeout is the hang guard): the verdict is that time moves, not how fast.
      while (fast.model.tipHeight() === before) await new Promise((r) => setTimeout(r, 100));
      expect(fast.model.tipHeight()).toBeGreaterThan(before);
    });

    it('refuses Core RPC without the right basic auth', async () => {
      const response = await fetch(sim.url + '/', { method: 'POST', body: '{"method":"getblockcount"}' });
      expect(response.status).toBe(401);
    });
  });
});
