import { describe, expect, it } from 'vitest';
import { openSqliteHistory } from '../history/open';
import type { ChainBlock } from '../history/types';
import type { ChainReader } from './chain';
import { createObservatory } from './observatory';
import { createRecorder } from './recorder';
import type { EstimateSource } from './sources';

/**
 * The recorder over a real SQLite history, driven tick by tick with a scripted chain and scripted
 * quotes, so every figure below is worked by hand.
 */

const T0 = Date.parse('2026-11-26T10:00:00Z');

/** A full block (3,990,000 WU) unless `weight` says otherwise. */
function block(height: number, p10: number, p75: number, branch = 'a', weight = 3_990_000): ChainBlock {
  return {
    height,
    hash: `${branch}${height}`.padStart(64, '0'),
    time: Math.floor(T0 / 1000) + height * 600,
    tx_count: 2000,
    weight,
    total_fee: 1_000_000,
    subsidy: 312_500_000,
    min: 500,
    p10: p10 * 1000,
    p25: p10 * 1000,
    p50: p75 * 1000,
    p75: p75 * 1000,
    p90: p75 * 2000,
    max: 50_000,
    avg_fee_rate: p75 * 1000,
    stats_from: 'fee_range',
  };
}

/**
 * A chain whose blocks a test appends and replaces (a reorg), with a relay minimum (msat/vB) it
 * can change or stop answering (`relayMinimum` undefined: the fee endpoint is down).
 */
function scriptedChain(initial: ChainBlock[]): ChainReader & {
  blocksByHeight: Map<number, ChainBlock>;
  relay: number | undefined;
} {
  const blocksByHeight = new Map(initial.map((b) => [b.height, b]));
  const tip = () => Math.max(...blocksByHeight.keys());
  const chain = {
    name: 'scripted',
    blocksByHeight,
    relay: 1000 as number | undefined,
    async relayMinimum() {
      if (chain.relay === undefined) throw new Error('503 Service Unavailable');
      return chain.relay;
    },
    tipHeight: async () => tip(),
    hashAt: async (height: number) => blocksByHeight.get(height)!.hash,
    blocks: async (from: number, to: number) => {
      const out = [];
      for (let h = from; h <= to; h += 1) out.push(blocksByHeight.get(h)!);
      return out;
    },
  };
  return chain;
}

/** A source quoting fixed rates (sat/vB per target) at the chain's tip, or failing. */
function scriptedSource(
  name: string,
  chain: ChainReader,
  quotes: Record<number, number>,
): EstimateSource & {
  quotes: Record<number, number>;
  down: boolean;
} {
  const source = {
    name,
    targets: Object.keys(quotes).map(Number),
    quotes,
    down: false,
    async poll() {
      if (source.down)
        throw Object.assign(new Error('503 Service Unavailable'), { code: 'UPSTREAM_UNAVAILABLE' });
      return {
        tipHeight: await chain.tipHeight(),
        rates: new Map(Object.entries(source.quotes).map(([t, r]) => [Number(t), r * 1000])),
      };
    },
  };
  return source;
}

async function setup(quotes: Record<string, Record<number, number>>) {
  const history = openSqliteHistory(':memory:');
  await history.migrate();
  const chain = scriptedChain([block(100, 2, 4)]);
  const sources = Object.entries(quotes).map(([name, q]) => scriptedSource(name, chain, q));
  let clock = T0;
  const recorder = createRecorder({
    history,
    chain,
    sources,
    backfillBlocks: 1,
    intervalMs: 60_000,
    now: () => clock,
  });
  const observatory = createObservatory({ history, now: () => clock, maxStalenessMs: 0 });
  const advance = (ms: number) => {
    clock += ms;
  };
  return { history, chain, sources, recorder, observatory, advance };
}

describe('recorder', () => {
  it('records each poll, judges an estimate once its window is recorded, and scores it', async () => {
    const { chain, recorder, observatory, advance, history } = await setup({ s: { 1: 5, 2: 3 } });
    expect(await recorder.tick()).toMatchObject({ role: 'recorder', blocks: 1, estimates: 2, judged: 0 });
    // block 101: p10 4 → the 1-block quote of 5 hits (within: 5 ≤ p75 6); the 2-block quote of 3 waits
    chain.blocksByHeight.set(101, block(101, 4, 6));
    advance(60_000);
    expect(await recorder.tick()).toMatchObject({ blocks: 1, estimates: 2, judged: 1 });
    // block 102: p10 3.5 → the 2-block quote of 3 from tip 100 misses (4 and 3.5 both above 3)
    chain.blocksByHeight.set(102, block(102, 3.5, 6));
    advance(60_000);
    const third = await recorder.tick();
    // judged at 102: (tip 100, target 2) and (tip 101, target 1)
    expect(third).toMatchObject({ blocks: 1, judged: 2 });
    const board = await observatory.scoreboard({ hours: 1 });
    expect(board.horizons).toEqual([1, 2]);
    expect(board.rows.map((r) => [r.target, r.n, r.hit_rate, r.polls, r.availability])).toEqual([
      [1, 2, 1, 3, 1],
      [2, 1, 0, 3, 1],
    ]);
    // target 1: overpayments 140 (5 − 4 at block 101) and 210 (5 − 3.5 at 102), nearest-rank median 140
    expect(board.rows[0]).toMatchObject({ median_overpayment_sats_140: 140, cost: 140, blocks: 2 });
    // target 2: one miss that needed 3.5 sat/vB (490 sats, 492 as its histogram bin reports it)
    expect(board.rows[1]).toMatchObject({
      miss_rate: 1,
      median_miss_entry_fee_sats_140: 492,
      cost: 4920,
      blocks: 2,
    });
    expect((await history.counts()).estimates).toBe(6);
  });

  it('counts a quote at the relay minimum as included in a block that had room, and a full block only from its p10', async () => {
    const { chain, recorder, observatory, advance } = await setup({ s: { 1: 1 }, t: { 1: 2.5 } });
    await recorder.tick(); // quotes 1 and 2.5 at tip 100
    // 101 had room (1,600,000 WU, 40 %): its p10 of 3 does not matter, the relay minimum of 1 does
    chain.blocksByHeight.set(101, block(101, 3, 6, 'a', 1_600_000));
    advance(60_000);
    await recorder.tick(); // judged on 101; quotes again at tip 101
    // 102 is full: 1 and 2.5 are both below its p10 of 3 → misses
    chain.blocksByHeight.set(102, block(102, 3, 6));
    advance(60_000);
    await recorder.tick();
    const rows = (await observatory.scoreboard({ hours: 1 })).rows;
    // s: a hit with no overpayment, then a miss needing 3 sat/vB (420 sats): 10 × 0.5 × 420;
    // t: 2.5 − 1 = 1.5 sat/vB over → 350 − 140 = 210 sats, then the same miss
    expect(
      rows.map((r) => [r.source, r.n, r.hit_rate, r.median_overpayment_sats_140, r.cost, r.rank]),
    ).toEqual([
      ['s', 2, 0.5, 0, 2100, 1],
      ['t', 2, 0.5, 210, 2310, 2],
    ]);
    const stats = await observatory.blockStats({ limit: 2 });
    expect(stats.map((b) => [b.height, b.full, b.relay_minimum, b.entry_rate])).toEqual([
      [102, true, 1, 3],
      [101, false, 1, 1],
    ]);
  });

  it('records new blocks with the last relay minimum while the fee endpoint is down, and none before one was read', async () => {
    const { chain, recorder, history, advance } = await setup({ s: { 1: 5 } });
    chain.relay = undefined;
    const first = await recorder.tick();
    expect(first).toMatchObject({ blocks: 0, estimates: 1 });
    expect(await history.tip()).toBeUndefined();
    chain.relay = 100; // 0.1 sat/vB (Core ≥ 29.1)
    advance(60_000);
    expect(await recorder.tick()).toMatchObject({ blocks: 1 });
    chain.relay = undefined;
    chain.blocksByHeight.set(101, block(101, 4, 6));
    advance(60_000);
    expect(await recorder.tick()).toMatchObject({ blocks: 1 });
    expect((await history.blocks({ limit: 2 })).map((b) => [b.height, b.relay_minimum])).toEqual([
      [101, 100],
      [100, 100],
    ]);
  });

  it('takes back the judgments of orphaned blocks and judges again on the new branch', async () => {
    const { chain, recorder, observatory, advance } = await setup({ s: { 1: 5 } });
    await recorder.tick(); // quote 5 at tip 100
    chain.blocksByHeight.set(101, block(101, 4, 6)); // hit
    advance(60_000);
    await recorder.tick(); // judged hit; quote 5 at tip 101
    expect((await observatory.scoreboard({ hours: 1 })).rows[0]).toMatchObject({ n: 1, hit_rate: 1 });
    // 101 is orphaned by a branch whose 101' has p10 6, then 102' with p10 4.5
    chain.blocksByHeight.set(101, block(101, 6, 8, 'b'));
    chain.blocksByHeight.set(102, block(102, 4.5, 7, 'b'));
    advance(60_000);
    const report = await recorder.tick();
    expect(report).toMatchObject({ reorged: 1, blocks: 2 });
    const row = (await observatory.scoreboard({ hours: 1 })).rows[0]!;
    // (tip 100) misses on 101', needing 6 sat/vB (840 sats); (tip 101) hits on 102' with
    // 5 − 4.5 = 0.5 sat/vB → 700 − 630 = 70 sats
    expect(row).toMatchObject({
      n: 2,
      hit_rate: 0.5,
      median_overpayment_sats_140: 70,
      cost: 70 + 10 * 0.5 * 840,
    });
    expect(
      (await observatory.blockStats({ limit: 5 })).map((b) => [b.height, b.hash.replace(/^0+/, '')]),
    ).toEqual([
      [102, 'b102'],
      [101, 'b101'],
      [100, 'a100'],
    ]);
  });

  it('records an upstream outage as a gap and as lost availability, inventing no estimate', async () => {
    const { sources, recorder, observatory, advance } = await setup({ s: { 1: 5 }, t: { 1: 6 } });
    await recorder.tick();
    sources[1]!.down = true;
    advance(60_000);
    expect(await recorder.tick()).toMatchObject({ failedSources: ['t'], estimates: 1 });
    advance(60_000);
    await recorder.tick();
    sources[1]!.down = false;
    advance(60_000);
    await recorder.tick();
    const board = await observatory.scoreboard({ hours: 1 });
    expect(board.rows.find((r) => r.source === 't')).toMatchObject({ polls: 4, availability: 0.5 });
    const page = await observatory.estimates({ source: 't', since: T0, until: T0 + 600_000, limit: 100 });
    expect(page.rows).toHaveLength(2);
    expect(page.gaps).toEqual([
      {
        source: 't',
        from: new Date(T0 + 60_000).toISOString(),
        to: new Date(T0 + 180_000).toISOString(),
        reason: 'upstream_unavailable',
      },
    ]);
  });

  it('records the time nobody recorded as a gap of the recorder itself when it starts again', async () => {
    const { history, chain, sources, recorder, observatory, advance } = await setup({ s: { 1: 5 } });
    await recorder.tick();
    await recorder.stop();
    advance(45 * 60_000); // the service was down for 45 minutes
    let clock = T0 + 45 * 60_000;
    const restarted = createRecorder({ history, chain, sources, backfillBlocks: 1, now: () => clock });
    expect((await restarted.tick()).role).toBe('recorder');
    clock += 60_000;
    const page = await observatory.estimates({ since: T0, until: clock + 1, limit: 10 });
    expect(page.rows.map((r) => r.observed_at)).toEqual([
      new Date(T0).toISOString(),
      new Date(T0 + 45 * 60_000).toISOString(),
    ]);
    expect(page.gaps).toEqual([
      {
        source: '*',
        from: new Date(T0).toISOString(),
        to: new Date(T0 + 45 * 60_000).toISOString(),
        reason: 'recorder_not_running',
      },
    ]);
  });

  it('lets only the lease holder record; the other instance follows and takes over when it stops', async () => {
    const { history, chain, sources, recorder } = await setup({ s: { 1: 5 } });
    let clock = T0;
    const second = createRecorder({ history, chain, sources, backfillBlocks: 1, now: () => clock });
    expect((await recorder.tick()).role).toBe('recorder');
    expect((await second.tick()).role).toBe('follower');
    await recorder.stop();
    clock += 60_000;
    chain.blocksByHeight.set(101, block(101, 4, 6));
    expect(await second.tick()).toMatchObject({ role: 'recorder', blocks: 1, judged: 1 });
    expect((await history.blocks({ limit: 10 })).map((b) => b.height)).toEqual([101, 100]);
  });
});
