// The preview's freshness timetable (docs/fee-service-contract.md#limits) with the simulator's upstream-down scenario,
// driven by a manual clock: fresh up to 30 s, stale fallback up to 120 s, then 503. No sleeps.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningFeeService } from '../src/service';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';
import { createManualClock, type ManualClock } from '../src/snapshot/clock';
import { assertErrorBody, assertFeePreview } from './support/contract-schemas';
import { type JsonBody, removeScratch, startTestService } from './support/harness';

let simulator: MempoolSimulator;
let service: RunningFeeService;
let clock: ManualClock;
const T0 = Date.parse('2026-08-06T12:00:00.000Z');

beforeAll(async () => {
  simulator = await startMempoolSimulator({ scenario: 'calm', seed: 11 });
  clock = createManualClock(T0);
  service = await startTestService(
    {
      SNAPSHOT_INTERVAL_MS: '10000',
      // The preview needs no facilitator: an unreachable one keeps the devnet out of this file.
      FACILITATOR_URL: 'http://127.0.0.1:9',
      PAY_TO: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
    },
    { simulator, clock },
  );
});

afterAll(async () => {
  await service?.close();
  await simulator?.close();
  removeScratch();
});

/** Moves the clock to `seconds` after T0 in poll-sized steps, letting each poll finish. */
async function moveTo(seconds: number): Promise<void> {
  while (clock.now() < T0 + seconds * 1000) {
    clock.advance(Math.min(10_000, T0 + seconds * 1000 - clock.now()));
    await service.snapshots.settled();
  }
}

async function preview() {
  const response = await fetch(`${service.url}/api/v1/fees/preview`);
  return { status: response.status, body: (await response.json()) as JsonBody };
}

describe('preview freshness with the upstream down', () => {
  it('goes fresh → stale → 503 on the contract timetable and recovers with the upstream', async () => {
    const first = await preview();
    expect(first.status).toBe(200);
    assertFeePreview(first.body);
    expect(first.body['meta']).toMatchObject({
      stale: false,
      age_seconds: 0,
      fetched_at: new Date(T0).toISOString(),
    });
    const digest = first.body['meta'].snapshot_digest;

    simulator.setScenario('upstream-down');
    await moveTo(30);
    const atThirty = await preview();
    expect(atThirty.status).toBe(200);
    expect(atThirty.body['meta']).toMatchObject({ stale: false, age_seconds: 30, snapshot_digest: digest });

    await moveTo(31);
    const atThirtyOne = await preview();
    expect(atThirtyOne.status).toBe(200);
    assertFeePreview(atThirtyOne.body);
    expect(atThirtyOne.body['meta']).toMatchObject({ stale: true, age_seconds: 31, snapshot_digest: digest });

    await moveTo(120);
    const atLimit = await preview();
    expect(atLimit.status).toBe(200);
    expect(atLimit.body['meta']).toMatchObject({ stale: true, age_seconds: 120 });

    await moveTo(121);
    const expired = await preview();
    expect(expired.status).toBe(503);
    assertErrorBody(expired.body);
    expect(expired.body['error'].code).toBe('no_validated_snapshot');
    const decision = await fetch(`${service.url}/api/v1/fees/now`);
    expect(decision.status).toBe(503);
    expect(decision.headers.get('payment-required')).toBeNull();

    simulator.setScenario('calm');
    await moveTo(131);
    const recovered = await preview();
    expect(recovered.status).toBe(200);
    expect(recovered.body['meta'].stale).toBe(false);
    expect(recovered.body['meta'].age_seconds).toBeLessThan(10);
    expect(Date.parse(recovered.body['meta'].fetched_at)).toBeGreaterThan(T0 + 121_000);
  });
});
