import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MempoolSimulator, startMempoolSimulator } from '../../simulator/server';
import { createBitcoinCoreClient } from '../../upstreams/bitcoin-core';
import { createMempoolSpaceClient } from '../../upstreams/mempool-space';
import {
  bitcoinCoreChain,
  mempoolSpaceChain,
  percentilesOfFeeRange,
  percentilesOfTransactions,
} from './chain';

describe('percentilesOfTransactions', () => {
  it('weighs each rate by its virtual size', () => {
    // rates 1, 2, 10 sat/vB over 100, 700, 200 vB: 10 % of the vsize is at 1, up to 80 % at 2
    const { percentiles, average } = percentilesOfTransactions([
      { fee: 2000, vsize: 200 },
      { fee: 100, vsize: 100 },
      { fee: 1400, vsize: 700 },
    ]);
    expect(percentiles).toEqual([1000, 1000, 2000, 2000, 2000, 10_000, 10_000]);
    expect(average).toBe(3500); // 3,500 sats over 1,000 vB
  });

  it('reads an empty block as all zeros: any rate would have fitted', () => {
    expect(percentilesOfTransactions([]).percentiles).toEqual([0, 0, 0, 0, 0, 0, 0]);
    expect(percentilesOfFeeRange([])).toEqual([0, 0, 0, 0, 0, 0, 0]);
  });

  it('reads a fee range of another length at the nearest position of each quantile', () => {
    expect(percentilesOfFeeRange([1, 2, 3])).toEqual([1000, 1000, 2000, 2000, 3000, 3000, 3000]);
  });
});

describe('chain readers on the simulator', () => {
  let sim: MempoolSimulator;
  beforeAll(async () => {
    sim = await startMempoolSimulator({ seed: 9 });
    sim.mineBlock();
    sim.mineBlock();
  });
  afterAll(() => sim.close());

  it('reads mempool.space blocks 15 at a time with their fee range, ascending and contiguous', async () => {
    const chain = mempoolSpaceChain(createMempoolSpaceClient({ baseUrl: sim.url }));
    const tip = await chain.tipHeight();
    const before = sim.requestCount();
    const blocks = await chain.blocks(tip - 16, tip);
    expect(sim.requestCount() - before).toBe(2);
    expect(blocks.map((b) => b.height)).toEqual(Array.from({ length: 17 }, (_, i) => tip - 16 + i));
    const model = sim.model.blockByHeight(tip)!;
    expect(blocks.at(-1)).toMatchObject({
      hash: model.hash,
      stats_from: 'fee_range',
      total_fee: model.totalFees,
    });
    expect(blocks.at(-1)!.p10).toBe(Math.round(model.feeRange[1]! * 1000));
    expect(await chain.hashAt(tip)).toBe(model.hash);
  });

  it('reads Core blocks from their transactions (getblock with verbosity 2)', async () => {
    const chain = bitcoinCoreChain(createBitcoinCoreClient({ url: sim.coreRpcUrl }));
    const tip = await chain.tipHeight();
    const [block] = await chain.blocks(tip, tip);
    const model = sim.model.blockByHeight(tip)!;
    expect(block).toMatchObject({
      height: tip,
      hash: model.hash,
      stats_from: 'transactions',
      total_fee: model.totalFees,
    });
    expect(block!.tx_count).toBe(model.txCount);
    expect(block!.min).toBeLessThanOrEqual(block!.p10);
    expect(block!.p10).toBeLessThanOrEqual(block!.p50);
    expect(block!.p50).toBeLessThanOrEqual(block!.p90);
    // the simulator's own fee range is computed from the same transactions, from the top down
    expect(Math.abs(block!.p50 - model.feeRange[3]! * 1000)).toBeLessThanOrEqual(
      Math.max(50, model.feeRange[3]! * 100),
    );
  });
});
