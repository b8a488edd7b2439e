import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EncodedJson } from '../../../http/respond';
import type { RouteContext } from '../../../http/types';
import { encodeResult } from '../../../mount/shared';
import { createManualClock } from '../../../snapshot/clock';
import { createSnapshotService } from '../../../snapshot/service';
import type { FeeSnapshot, FeeSnapshotSource } from '../../../snapshot/types';
import { validateFeeSnapshot } from '../../../snapshot/validate';
import { createPreviewResponder, previewHandler } from './handler';

const T0 = Date.parse('2026-08-06T12:00:00Z');

/** A monotone tier set (fastest ≥ … ≥ minimum ≥ 0) with three-decimal rates, as validation wants. */
const tiersArb = fc
  .array(fc.integer({ min: 0, max: 500_000 }), { minLength: 5, maxLength: 5 })
  .map((rates) => {
    const [minimum, economy, hour, half_hour, fastest] = [...rates]
      .sort((a, b) => a - b)
      .map((rate) => rate / 1000) as [number, number, number, number, number];
    return { fastest, half_hour, hour, economy, minimum };
  });

const snapshotArb = fc.record({
  tiers: tiersArb,
  count: fc.integer({ min: 0, max: 500_000 }),
  vsize: fc.integer({ min: 0, max: 400_000_000 }),
  tip: fc.option(fc.integer({ min: 800_000, max: 800_010 }), { nil: null }),
});

/** What the property test does, in order: poll a new snapshot, a failed poll, time, a block, a request. */
const stepArb = fc.oneof(
  { weight: 2, arbitrary: snapshotArb.map((snapshot) => ({ kind: 'poll' as const, snapshot })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'fail' as const }) },
  {
    weight: 3,
    arbitrary: fc.integer({ min: 0, max: 50_000 }).map((ms) => ({ kind: 'advance' as const, ms })),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 800_000, max: 800_012 }).map((height) => ({ kind: 'tip' as const, height })),
  },
  { weight: 6, arbitrary: fc.constant({ kind: 'request' as const }) },
);

const textOf = (body: Buffer | string | undefined) =>
  typeof body === 'string' || body === undefined ? body : body.toString('utf8');

function context(requestId: string): RouteContext {
  return {
    method: 'GET',
    url: new URL('http://127.0.0.1/api/v1/fees/preview'),
    target: '/api/v1/fees/preview',
    params: {},
    header: () => undefined,
    requestId,
    payment: undefined,
    readBody: async () => Buffer.alloc(0),
  };
}

describe('createPreviewResponder', () => {
  it('answers exactly what previewHandler encodes, through snapshots, ageing, staleness and 503s', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 60 }), async (steps) => {
        const clock = createManualClock(T0);
        let next: FeeSnapshot | undefined;
        const upstream: FeeSnapshotSource = {
          snapshotSchema: 'mempool-space-fees-v1',
          source: 'https://mempool.space',
          async fetchSnapshot() {
            if (!next) throw new Error('upstream down');
            return validateFeeSnapshot(next);
          },
        };
        const snapshots = createSnapshotService({ upstream, clock });
        const deps = { snapshots, network: 'eip155:8453' };
        const respond = createPreviewResponder(deps);
        let served = 0;
        for (const [index, step] of steps.entries()) {
          if (step.kind === 'poll' || step.kind === 'fail') {
            next =
              step.kind === 'fail'
                ? undefined
                : {
                    snapshot_schema: 'mempool-space-fees-v1',
                    source: 'https://mempool.space',
                    fetched_at: new Date(clock.now()).toISOString(),
                    tip_height: step.snapshot.tip,
                    tiers: step.snapshot.tiers,
                    mempool: { count: step.snapshot.count, vsize: step.snapshot.vsize },
                    projected_blocks: [],
                    repaired: false,
                  };
            await snapshots.poll();
          } else if (step.kind === 'advance') {
            clock.advance(step.ms);
          } else if (step.kind === 'tip') {
            snapshots.noteTipHeight(step.height);
          } else {
            const requestId = `req-${index}`;
            const fast = encodeResult(respond(context(requestId)));
            const reference = encodeResult(previewHandler(context(requestId), deps));
            expect(fast.status).toBe(reference.status);
            expect(Object.entries(fast.headers)).toEqual(Object.entries(reference.headers));
            expect(textOf(fast.body)).toBe(textOf(reference.body));
            if (fast.status === 200) {
              served += 1;
              // The age is whole seconds since fetched_at (parsed once per snapshot by the service).
              const body = JSON.parse(textOf(fast.body)!);
              const ageMs = Math.max(0, clock.now() - Date.parse(body.meta.fetched_at));
              expect(body.meta.age_seconds).toBe(Math.floor(ageMs / 1000));
            }
          }
        }
        return served >= 0;
      }),
      { numRuns: 200 },
    );
  });

  it('builds the bytes once per reading and rebuilds them when the age or the staleness changes', async () => {
    const clock = createManualClock(T0);
    const snapshot: FeeSnapshot = {
      snapshot_schema: 'mempool-space-fees-v1',
      source: 'https://mempool.space',
      fetched_at: new Date(T0).toISOString(),
      tip_height: 800_000,
      tiers: { fastest: 13, half_hour: 11, hour: 9, economy: 2, minimum: 1 },
      mempool: { count: 12_000, vsize: 3_000_000 },
      projected_blocks: [],
      repaired: false,
    };
    const snapshots = createSnapshotService({
      upstream: {
        snapshotSchema: snapshot.snapshot_schema,
        source: snapshot.source,
        fetchSnapshot: async () => validateFeeSnapshot(snapshot),
      },
      clock,
    });
    await snapshots.poll();
    const respond = createPreviewResponder({ snapshots, network: 'eip155:8453' });
    const first = respond(context('a')).body;
    clock.advance(999);
    expect(respond(context('b')).body).toBe(first);
    clock.advance(1);
    const older = respond(context('c')).body;
    expect(older).not.toBe(first);
    expect(older).toBeInstanceOf(EncodedJson);
    expect(JSON.parse((older as EncodedJson).text).meta.age_seconds).toBe(1);
    snapshots.noteTipHeight(800_001);
    const stale = respond(context('d')).body;
    expect(JSON.parse((stale as EncodedJson).text).meta).toMatchObject({ age_seconds: 1, stale: true });
  });
});
