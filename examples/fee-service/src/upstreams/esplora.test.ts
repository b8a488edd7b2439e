import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type MempoolSimulator, startMempoolSimulator } from '../simulator/server';
import { ESPLORA_SNAPSHOT_SCHEMA } from '../snapshot/schemas';
import { UpstreamUnavailableError } from './errors';
import { createEsploraClient, rateForTarget, repairEstimates } from './esplora';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

describe('Esplora fee-estimates parsing', () => {
  it('repairs non-monotonic targets by a running minimum and flags it', () => {
    const parsed = repairEstimates(
      new Map([
        [1, 10],
        [2, 8],
        [3, 9],
        [6, 5],
        [144, 6],
      ]),
    );
    expect([...parsed.estimates]).toEqual([
      [1, 10],
      [2, 8],
      [3, 8],
      [6, 5],
      [144, 5],
    ]);
    expect(parsed.repaired).toBe(true);
    expect(parsed.raw.get(3)).toBe(9);
    expect(
      repairEstimates(
        new Map([
          [1, 3],
          [2, 2],
        ]),
      ).repaired,
    ).toBe(false);
  });

  it('takes the nearest shorter target for a missing key, else the nearest longer one', () => {
    const estimates = new Map([
      [2, 7],
      [5, 4],
      [144, 1],
    ]);
    expect(rateForTarget(estimates, 3)).toBe(7);
    expect(rateForTarget(estimates, 6)).toBe(4);
    expect(rateForTarget(estimates, 1)).toBe(7);
    expect(rateForTarget(estimates, 144)).toBe(1);
  });
});

describe('Esplora adapter against the simulator', () => {
  let calm: MempoolSimulator;
  let backlog: MempoolSimulator;
  beforeAll(async () => {
    [calm, backlog] = await Promise.all([
      startMempoolSimulator({ scenario: 'calm', seed: 3 }),
      startMempoolSimulator({ scenario: 'backlog', seed: 3 }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([calm.close(), backlog.close()]);
  });

  it('accepts the 203 answer of /api/fee-estimates and skips missing targets', async () => {
    const status = (await fetch(`${calm.esploraUrl}/fee-estimates`)).status;
    expect(status).toBe(203);
    const client = createEsploraClient({ baseUrl: calm.esploraUrl });
    const { estimates, repaired } = await client.fetchFeeEstimates();
    expect(estimates.get(1)).toBe(calm.model.estimateForTarget(1));
    expect(estimates.has(11)).toBe(false);
    expect(repaired).toBe(false);
  });

  it('builds a validated snapshot from the calm mempool without a repair', async () => {
    const client = createEsploraClient({ baseUrl: calm.esploraUrl });
    const snapshot = await client.fetchSnapshot();
    expect(snapshot.snapshot_schema).toBe(ESPLORA_SNAPSHOT_SCHEMA);
    expect(snapshot.source).toBe(calm.esploraUrl);
    expect(snapshot.tiers.fastest).toBe(calm.model.estimateForTarget(1));
    expect(snapshot.tiers.minimum).toBe(calm.model.estimateForTarget(1008));
    expect(snapshot.projected_blocks).toEqual([]);
    expect(snapshot.repaired).toBe(false);
    expect(snapshot.tip_height).toBe(calm.model.tipHeight());
  });

  it('repairs the non-monotonic backlog answer and records the repair', async () => {
    const raw = (await (await fetch(`${backlog.esploraUrl}/fee-estimates`)).json()) as Record<string, number>;
    expect(raw['3']).toBeGreaterThan(raw['2']!);
    const client = createEsploraClient({ baseUrl: backlog.esploraUrl });
    const snapshot = await client.fetchSnapshot();
    expect(snapshot.repaired).toBe(true);
    expect(snapshot.tiers.half_hour).toBeLessThanOrEqual(snapshot.tiers.fastest);
    expect(snapshot.tiers.half_hour).toBe(raw['2']);
    expect(snapshot.mempool.vsize).toBeGreaterThan(8_000_000);
  });

  it('treats 503 Service Unavailable as a temporary outage', async () => {
    calm.setScenario('upstream-down');
    try {
      const client = createEsploraClient({
        baseUrl: calm.esploraUrl,
        retry: { attempts: 2, baseDelayMs: 1 },
      });
      const error = await client.fetchFeeEstimates().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UpstreamUnavailableError);
      expect((error as UpstreamUnavailableError).body).toBe('Service Unavailable');
    } finally {
      calm.setScenario('calm');
    }
  });

  it('reads a transaction and a block', async () => {
    const client = createEsploraClient({ baseUrl: calm.esploraUrl });
    const tip = calm.model.tip();
    expect((await client.fetchBlock(tip.hash)).height).toBe(tip.height);
    expect(await client.fetchBlockHash(tip.height)).toBe(tip.hash);
    const txid = calm.model.txidOfTx(tip.txs[0]!);
    expect((await client.fetchTransaction(txid)).status.block_hash).toBe(tip.hash);
  });
});
