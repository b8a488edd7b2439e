// What the paid resources judge, on the simulator's calm, backlog and sub-sat scenarios (issue 33
// part 2): the landscape's bands carry their buckets' real bounds and its targets come repaired
// and say so; the next block, the broadcast's placement and the explainers' market give one entry
// rate, the rule of docs/fee-rules.md#would-have-been-included. Built from the upstreams as the
// resources read them, time frozen, so each figure is checked against the upstream's own answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatRate } from '../src/analysis/format';
import { marketFromSnapshot } from '../src/analysis/market';
import { type BitcoinUpstreams, createBitcoinUpstreams } from '../src/capabilities/bitcoin';
import { FULL_BLOCK_WEIGHT } from '../src/domain/inclusion';
import { buildFeeLandscape } from '../src/resources/fees/landscape/build';
import { fetchLandscapeData, type LandscapeData } from '../src/resources/fees/landscape/data';
import { buildNextBlock } from '../src/resources/mining/nextblock/build';
import { fetchNextBlockData } from '../src/resources/mining/nextblock/data';
import { broadcastChecked } from '../src/resources/transactions/broadcast/flow';
import { inspectTransaction } from '../src/resources/transactions/broadcast/inspect';
import { placementOf } from '../src/resources/transactions/broadcast/placement';
import type { ScenarioName } from '../src/simulator/scenarios';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';
import { faucetSpend } from './fixtures/raw-tx';

const SCENARIOS = ['calm', 'backlog', 'sub-sat'] as const satisfies readonly ScenarioName[];

interface World {
  simulator: MempoolSimulator;
  upstreams: BitcoinUpstreams;
}
const worlds = new Map<ScenarioName, World>();

beforeAll(async () => {
  for (const scenario of SCENARIOS) {
    const simulator = await startMempoolSimulator({ scenario, seed: 33 });
    // Two simulated hours: calm and sub-sat drain to a next block with room, backlog stays full.
    simulator.advance(2 * 3_600_000);
    const upstreams = createBitcoinUpstreams(
      { upstream: { kind: 'mempool' }, sources: {} } as Parameters<typeof createBitcoinUpstreams>[0],
      simulator,
    );
    worlds.set(scenario, { simulator, upstreams });
  }
});
afterAll(async () => {
  await Promise.all([...worlds.values()].map((w) => w.simulator.close()));
});

const round3 = (x: number) => Math.round(x * 1000) / 1000;
const world = (scenario: ScenarioName) => worlds.get(scenario)!;

async function landscapeOf(scenario: ScenarioName) {
  const data: LandscapeData = await fetchLandscapeData(world(scenario).upstreams);
  const body = buildFeeLandscape(
    { value: data, fetchedAtMs: Date.now(), digest: 'sha256:test' },
    {
      age_seconds: 0,
      stale: false,
    },
  );
  return { data, body: body.data };
}

describe.each(SCENARIOS)('the landscape in the %s scenario', (scenario) => {
  it('labels each band by the real bounds of the upstream buckets it holds', async () => {
    const { data, body } = await landscapeOf(scenario);
    const buckets = [...data.mempool.histogram].sort((a, b) => b[0] - a[0]);
    const highest = round3(Math.max(...data.projected_blocks.map((b) => b.fee_range.at(-1)!)));
    const bands = body.histogram.bands;
    expect(bands.length).toBeGreaterThan(0);
    expect(bands[0]!.max_sat_vb).toBe(highest);
    // contiguous, highest first: each band ends where the one above begins
    for (let i = 1; i < bands.length; i += 1) expect(bands[i]!.max_sat_vb).toBe(bands[i - 1]!.min_sat_vb);
    expect(bands.reduce((sum, b) => sum + b.vsize, 0)).toBe(buckets.reduce((sum, [, v]) => sum + v, 0));
    // every bucket, from its rate up to the next higher bucket's, lies inside one band
    buckets.forEach(([rate, vsize], i) => {
      if (vsize === 0) return;
      const upper = i === 0 ? highest : buckets[i - 1]![0];
      const band = bands.find(
        (b) => b.min_sat_vb <= rate && rate < (b.max_sat_vb ?? Number.POSITIVE_INFINITY),
      );
      expect(band, `bucket ${rate}–${upper}`).toBeDefined();
      expect(upper).toBeLessThanOrEqual(band!.max_sat_vb!);
    });
  });

  it('publishes every source’s targets in order, never rising with the target, repaired: true when lowered', async () => {
    const { body } = await landscapeOf(scenario);
    const raw = (await (
      await fetch(`${world(scenario).simulator.esploraUrl}/fee-estimates`)
    ).json()) as Record<string, number>;
    for (const source of body.sources) {
      if (source.status !== 'ok') throw new Error(`${source.source} unavailable: ${source.reason}`);
      const targets = Object.entries(source.targets).map(([t, r]) => [Number(t), r] as const);
      expect(targets.map(([t]) => t)).toEqual(targets.map(([t]) => t).sort((a, b) => a - b));
      for (let i = 1; i < targets.length; i += 1)
        expect(targets[i]![1]).toBeLessThanOrEqual(targets[i - 1]![1]);
      expect(source.repaired).toBe(Object.keys(source.lowered_targets).length > 0);
    }
    const esplora = body.sources.find((s) => s.source === 'esplora');
    if (esplora?.status !== 'ok') throw new Error('no esplora quote');
    const outOfOrder = raw['3']! > raw['2']!; // the backlog scenario quotes 3 blocks above 2
    expect(outOfOrder).toBe(scenario === 'backlog');
    expect(esplora.repaired).toBe(outOfOrder);
    if (outOfOrder) {
      expect(esplora.lowered_targets['3']).toBe(raw['3']);
      expect(esplora.targets['3']).toBe(raw['2']);
    }
  });
});

const fresh = { age_seconds: 0, stale: false };
const reading = <T>(value: T) => ({ value, fetchedAtMs: Date.now(), digest: 'sha256:test' });

describe.each(SCENARIOS)(
  'one entry rate in the %s scenario (docs/fee-rules.md#would-have-been-included)',
  (scenario) => {
    it('the next block, the broadcast’s placement and the explainers’ market give the rule’s rate', async () => {
      const { upstreams } = world(scenario);
      const mempoolOnly: BitcoinUpstreams = { primary: 'mempool', mempool: upstreams.mempool! };
      const coreOnly: BitcoinUpstreams = { primary: 'core', core: upstreams.core! };
      const now = Date.now();
      const projection = buildNextBlock(reading(await fetchNextBlockData(mempoolOnly)), fresh, now).data;
      const template = buildNextBlock(reading(await fetchNextBlockData(upstreams)), fresh, now).data;
      expect([projection.basis, template.basis]).toEqual(['mempool_projection', 'block_template']);
      const relay = (await upstreams.mempool!.fetchPreciseFees()).minimumFee;
      // the scenario's shape: calm and sub-sat have room after two hours, the backlog never
      expect(projection.block_full).toBe(scenario === 'backlog');
      for (const next of [projection, template]) {
        expect(next.block_full).toBe(next.weight >= FULL_BLOCK_WEIGHT);
        const rule = next.block_full ? Math.max(relay, next.fee_rates_sat_vb.p10) : relay;
        expect(next.entry_fee_rate_sat_vb, next.basis).toBe(round3(rule));
        expect(next.entry_rule).toContain(
          next.block_full
            ? `its 10th-percentile rate, ${formatRate(rule)}`
            : `the relay minimum, ${formatRate(relay)}`,
        );
      }
      // the broadcast places a rate against the same entry rate on each basis (not 0 in a block with room)
      for (const [only, next] of [
        [mempoolOnly, projection],
        [coreOnly, template],
      ] as const) {
        const entry = next.entry_fee_rate_sat_vb;
        expect(entry).toBeGreaterThan(0);
        expect(await placementOf(only, entry)).toMatchObject({
          basis: next.basis,
          entry_fee_rate_sat_vb: entry,
          would_be_included_next: true,
          projected_block_index: 0,
        });
        expect(await placementOf(only, round3(entry - 0.001))).toMatchObject({
          entry_fee_rate_sat_vb: entry,
          would_be_included_next: false,
        });
      }
      // the landscape (and the dashboard, from the same figures) shows it for the next block
      const { body } = await landscapeOf(scenario);
      expect(body.projected_blocks[0]).toMatchObject({
        full: projection.block_full,
        entry_fee_rate_sat_vb: projection.entry_fee_rate_sat_vb,
      });
      // the explainers and the advice compare with the same rate
      const market = marketFromSnapshot(await upstreams.mempool!.fetchSnapshot());
      expect(market.next_block_floor_sat_vb).toBe(projection.entry_fee_rate_sat_vb);
      expect(market.floor_source).toBe(projection.block_full ? 'projected_block' : 'minimum_tier');
    });
  },
);

describe.each(SCENARIOS)('a broadcast refused in the %s scenario', (scenario) => {
  it('keeps the node’s detail: the fee paid and the fee the relay minimum asks', async () => {
    const { simulator, upstreams } = world(scenario);
    const relay = (await upstreams.mempool!.fetchPreciseFees()).minimumFee;
    const spend = faucetSpend(simulator.model, { output: 60, fee: 5n }); // 110 vB: below 0.1 sat/vB too
    const inspection = inspectTransaction(spend.hex);
    if (!inspection.ok) throw new Error('the test transaction fails the local checks');
    const required = Math.ceil(relay * inspection.tx.vsize);
    const detail = `min relay fee not met, 5 < ${required}`;
    // through Core's testmempoolaccept (reject-details) and through mempool.space's broadcast text
    for (const through of [
      upstreams,
      { primary: 'mempool', mempool: upstreams.mempool! } as BitcoinUpstreams,
    ]) {
      const verdict = await broadcastChecked({
        upstreams: through,
        tx: inspection.tx,
        hex: spend.hex,
        maxFeeRateSatVb: 1_000,
        allowHighFee: false,
      });
      expect(verdict).toEqual({
        refused: 'node_rejected',
        message: `the node refused it: ${detail} (it pays 5 sats; the node's minimum for its size is ${required} sats)`,
      });
    }
  });
});
