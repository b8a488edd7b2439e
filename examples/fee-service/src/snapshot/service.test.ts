import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { buildFeeDecision } from '../resources/fees/now/build';
import { FeeDecisionSchema } from '../resources/fees/now/schema';
import { buildFeePreview } from '../resources/fees/preview/build';
import { FeePreviewSchema } from '../resources/fees/preview/schema';
import { type MempoolSimulator, startMempoolSimulator } from '../simulator/server';
import { createMempoolSpaceClient } from '../upstreams/mempool-space';
import { createManualClock } from './clock';
import { SNAPSHOT_SCHEMA } from './schemas';
import { createSnapshotService, NoValidatedSnapshotError } from './service';
import type { FeeSnapshotSource, RecordedSnapshot } from './types';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const T0 = Date.parse('2026-08-06T12:00:00Z');

describe('snapshot service on a fake clock', () => {
  let sim: MempoolSimulator;
  beforeAll(async () => {
    sim = await startMempoolSimulator({ scenario: 'calm', seed: 77 });
  });
  beforeEach(() => {
    sim.setScenario('calm');
  });
  afterAll(async () => {
    await sim.close();
  });

  const upstreamFor = () => createMempoolSpaceClient({ baseUrl: sim.url, retry: { attempts: 1 } });

  it('throws NoValidatedSnapshot before any snapshot was validated', () => {
    const service = createSnapshotService({ upstream: upstreamFor(), clock: createManualClock(T0) });
    const error = (() => {
      try {
        service.current();
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(NoValidatedSnapshotError);
    expect((error as NoValidatedSnapshotError).code).toBe('NO_VALIDATED_SNAPSHOT');
    expect((error as NoValidatedSnapshotError).reason).toBe('none');
    // The service keeps polling: asking again later can help.
    expect((error as NoValidatedSnapshotError).retryable).toBe(true);
    expect(service.latest()).toBeUndefined();
  });

  it('goes fresh → stale → error while the upstream is down', async () => {
    const clock = createManualClock(T0);
    const service = createSnapshotService({ upstream: upstreamFor(), clock, intervalMs: 10_000 });
    service.start();
    await service.settled();
    const first = service.current();
    expect(first).toMatchObject({ age_seconds: 0, stale: false, evidence: 'recorded' });
    expect(first.snapshot.fetched_at).toBe('2026-08-06T12:00:00.000Z');

    sim.setScenario('upstream-down');
    for (let i = 0; i < 3; i += 1) {
      clock.advance(10_000);
      await service.settled();
    }
    expect(service.lastError()).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    expect(service.current()).toMatchObject({ age_seconds: 30, stale: false, evidence: 'recorded' });
    expect(service.current().snapshot).toBe(first.snapshot);

    clock.advance(10_000);
    await service.settled();
    expect(service.current()).toMatchObject({ age_seconds: 40, stale: true, evidence: 'degraded' });

    clock.advance(80_000);
    await service.settled();
    expect(service.current()).toMatchObject({ age_seconds: 120, stale: true, evidence: 'degraded' });

    clock.advance(1);
    expect(() => service.current()).toThrow(NoValidatedSnapshotError);
    expect(() => service.current()).toThrow(
      expect.objectContaining({
        reason: 'expired',
        message: 'no validated snapshot (the last one is too old)',
        retryable: true,
      }),
    );
    // Too old to serve, but still the last validated snapshot.
    expect(service.latest()).toBe(first.snapshot);
    service.stop();
  });

  it('recovers with a fresh snapshot once the upstream is back', async () => {
    const clock = createManualClock(T0);
    const service = createSnapshotService({ upstream: upstreamFor(), clock, intervalMs: 10_000 });
    sim.setScenario('upstream-down');
    service.start();
    await service.settled();
    expect(() => service.current()).toThrow(NoValidatedSnapshotError);
    expect(() => service.current()).toThrow(
      expect.objectContaining({ reason: 'none', message: 'no validated snapshot' }),
    );
    sim.setScenario('calm');
    clock.advance(10_000);
    await service.settled();
    expect(service.current()).toMatchObject({ age_seconds: 0, stale: false });
    service.stop();
    clock.advance(60_000);
    await service.settled();
    expect(service.current().age_seconds).toBe(60); // stopped: no more polls
  });

  it('marks the snapshot stale when a newer block is seen, before 30 s', async () => {
    const clock = createManualClock(T0);
    const service = createSnapshotService({ upstream: upstreamFor(), clock });
    await service.poll();
    sim.setScenario('upstream-down');
    sim.mineBlock();
    clock.advance(5_000);
    await service.poll(); // fee endpoints fail, the tip probe sees the new block
    expect(service.current()).toMatchObject({ age_seconds: 5, stale: true, evidence: 'degraded' });
  });

  it('keeps a snapshot stale once a block above its tip was seen, even when a lower height is told later', async () => {
    const clock = createManualClock(T0);
    const service = createSnapshotService({ upstream: upstreamFor(), clock });
    await service.poll();
    const tip = service.current().snapshot.tip_height;
    if (tip === null) throw new Error('the simulator reports a tip height');
    service.noteTipHeight(tip);
    expect(service.current()).toMatchObject({ stale: false, evidence: 'recorded' });
    service.noteTipHeight(tip + 1);
    expect(service.current()).toMatchObject({ stale: true, evidence: 'degraded' });
    service.noteTipHeight(tip - 1);
    expect(service.current()).toMatchObject({ stale: true, evidence: 'degraded' });
  });

  it.each([
    ['a fraction above the tip', (tip: number) => tip + 0.5],
    ['Infinity', () => Number.POSITIVE_INFINITY],
    ['NaN', () => Number.NaN],
  ])('ignores a tip height that is no block number (%s)', async (_label, height) => {
    const clock = createManualClock(T0);
    const service = createSnapshotService({ upstream: upstreamFor(), clock });
    await service.poll();
    const tip = service.current().snapshot.tip_height;
    if (tip === null) throw new Error('the simulator reports a tip height');
    service.noteTipHeight(height(tip));
    expect(service.current()).toMatchObject({ stale: false, evidence: 'recorded' });
  });

  it('joins the poll already running instead of asking the upstream a second time', async () => {
    const clock = createManualClock(T0);
    const real = upstreamFor();
    let calls = 0;
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const upstream: FeeSnapshotSource = {
      snapshotSchema: real.snapshotSchema,
      source: real.source,
      fetchSnapshot: async (options) => {
        calls += 1;
        await gate;
        return real.fetchSnapshot(options);
      },
    };
    const service = createSnapshotService({ upstream, clock });
    const first = service.poll();
    const second = service.poll();
    release();
    const [a, b] = await Promise.all([first, second]);
    expect(calls).toBe(1);
    expect(a.ok).toBe(true);
    expect(b).toBe(a);
    await service.poll();
    expect(calls).toBe(2); // the next poll, once the first finished, asks again
  });

  it('stops polling when stopped during a poll, and that poll still finishes', async () => {
    const clock = createManualClock(T0);
    const real = upstreamFor();
    let calls = 0;
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const upstream: FeeSnapshotSource = {
      snapshotSchema: real.snapshotSchema,
      source: real.source,
      fetchSnapshot: async (options) => {
        calls += 1;
        await gate;
        return real.fetchSnapshot(options);
      },
    };
    const service = createSnapshotService({ upstream, clock, intervalMs: 10_000 });
    service.start();
    service.stop();
    release();
    await service.settled();
    expect(service.latest()?.fetched_at).toBe('2026-08-06T12:00:00.000Z');
    clock.advance(60_000);
    await service.settled();
    expect(calls).toBe(1);
  });

  it('runs one polling loop however often it is started, so one stop ends it', async () => {
    const clock = createManualClock(T0);
    const real = upstreamFor();
    let calls = 0;
    const upstream: FeeSnapshotSource = {
      snapshotSchema: real.snapshotSchema,
      source: real.source,
      fetchSnapshot: (options) => {
        calls += 1;
        return real.fetchSnapshot(options);
      },
    };
    const service = createSnapshotService({ upstream, clock, intervalMs: 10_000 });
    service.start();
    service.start();
    await service.settled();
    expect(calls).toBe(1);
    clock.advance(10_000);
    await service.settled();
    expect(calls).toBe(2);
    service.stop();
    clock.advance(60_000);
    await service.settled();
    expect(calls).toBe(2);
  });

  it('keeps the previous valid snapshot when an answer fails validation', async () => {
    const clock = createManualClock(T0);
    const good = await upstreamFor().fetchSnapshot({ now: clock.now });
    let answer: () => RecordedSnapshot = () => good;
    const upstream: FeeSnapshotSource = {
      snapshotSchema: good.snapshot_schema,
      source: good.source,
      fetchSnapshot: async () => answer(),
    };
    const service = createSnapshotService({ upstream, clock });
    await service.poll();
    answer = () => ({
      ...good,
      fetched_at: new Date(clock.now()).toISOString(),
      tiers: { ...good.tiers, minimum: -1 },
    });
    clock.advance(10_000);
    const outcome = await service.poll();
    expect(outcome.ok).toBe(false);
    expect(service.lastError()).toMatchObject({ code: 'SNAPSHOT_INVALID' });
    expect(service.current().snapshot.snapshot_digest).toBe(good.snapshot_digest);
    expect(service.current().age_seconds).toBe(10);
  });

  it('reports every bad option at once', () => {
    expect(() =>
      createSnapshotService({
        upstream: {} as FeeSnapshotSource,
        intervalMs: 0,
        freshMs: 50,
        fallbackMs: 10,
      }),
    ).toThrow(
      /upstream must provide fetchSnapshot\(\); intervalMs must be > 0; fallbackMs must be ≥ freshMs/,
    );
  });
});

describe('snapshot service options at their bounds', () => {
  const upstream = {
    fetchSnapshot: async () => Promise.reject(new Error('not called')),
  } as unknown as FeeSnapshotSource;
  it('takes a fallback window equal to the fresh one, and a fresh window of 0', () => {
    expect(() =>
      createSnapshotService({ upstream, intervalMs: 1, freshMs: 30, fallbackMs: 30 }),
    ).not.toThrow();
    expect(() => createSnapshotService({ upstream, intervalMs: 1, freshMs: 0, fallbackMs: 0 })).not.toThrow();
  });

  it('refuses a negative or unreadable fresh window, and a fallback shorter than it', () => {
    expect(() => createSnapshotService({ upstream, intervalMs: 1, freshMs: -1, fallbackMs: 0 })).toThrow(
      /freshMs must be ≥ 0/,
    );
    expect(() =>
      createSnapshotService({ upstream, intervalMs: 1, freshMs: Number.NaN, fallbackMs: 0 }),
    ).toThrow(/freshMs must be ≥ 0/);
    expect(() => createSnapshotService({ upstream, intervalMs: 1, freshMs: 31, fallbackMs: 30 })).toThrow(
      /fallbackMs must be ≥ freshMs/,
    );
  });
});

describe('snapshot service feeding the fee bodies', () => {
  it('produces readings the preview and decision builders turn into schema-valid bodies', async () => {
    const sim = await startMempoolSimulator({ scenario: 'backlog', seed: 12 });
    try {
      const clock = createManualClock(T0);
      const service = createSnapshotService({
        upstream: createMempoolSpaceClient({ baseUrl: sim.url }),
        clock,
      });
      await service.poll();
      clock.advance(45_000);
      const reading = service.current();
      const preview = buildFeePreview({ reading, network: 'eip155:8453' });
      expect(FeePreviewSchema.parse(preview)).toEqual(preview);
      expect(preview.meta).toMatchObject({
        stale: true,
        age_seconds: 45,
        source: sim.url,
        snapshot_schema: SNAPSHOT_SCHEMA,
      });
      const decision = buildFeeDecision({
        reading,
        payment: {
          facilitator: 'tollbooth',
          network: 'eip155:8453',
          transaction_hash: `0x${'a'.repeat(64)}`,
        },
      });
      expect(FeeDecisionSchema.parse(decision)).toEqual(decision);
      expect(decision.meta.evidence).toBe('degraded');
      expect(decision.data.mempool.projected_block_count).toBeGreaterThanOrEqual(8);
      expect(decision.data.reason_codes).toContain('heavy_backlog');
    } finally {
      await sim.close();
    }
  });
});
