import fc from 'fast-check';
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  createServiceMetrics,
  LATENCY_BUCKETS,
  type PaidExchangeView,
  type PaymentOutcome,
  paymentOutcomeOf,
} from './metrics';
import type { SnapshotService } from './snapshot/service';

const NAMES = [
  'fee_service_http_requests_total',
  'fee_service_http_request_duration_seconds',
  'fee_service_payments_total',
] as const;

/** The metrics as they were: every request observed through prom-client's own label maps. */
function referenceMetrics() {
  const registry = new Registry();
  const requests = new Counter({
    name: 'fee_service_http_requests_total',
    help: 'HTTP requests by method, route and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'fee_service_http_request_duration_seconds',
    help: 'HTTP request latency by method and route (including payment verification and settlement).',
    labelNames: ['method', 'route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const payments = new Counter({
    name: 'fee_service_payments_total',
    help: 'Requests to paid routes by outcome (settled, signed_in, replayed, challenged, rejected, refused, uncertain, in_progress, unavailable, …).',
    labelNames: ['route', 'outcome'] as const,
    registers: [registry],
  });
  return {
    registry,
    observeRequest(labels: { method: string; route: string; status: number }, seconds: number) {
      requests.inc({ method: labels.method, route: labels.route, status: String(labels.status) });
      latency.observe({ method: labels.method, route: labels.route }, seconds);
    },
    observePayment(labels: { route: string; outcome: PaymentOutcome }) {
      payments.inc(labels);
    },
  };
}

const noSnapshots = {
  latest: () => undefined,
  current: () => {
    throw new Error('none');
  },
} as unknown as SnapshotService;

const secondsArb = fc.oneof(
  fc.constantFrom(0, ...LATENCY_BUCKETS, 30.000001, 1e-9),
  fc.double({ min: 0, max: 40, noNaN: true }),
  fc.integer({ min: 0, max: 40_000_000 }).map((us) => us / 1e6),
);
const eventArb = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('request' as const),
      method: fc.constantFrom('GET', 'POST', 'HEAD', 'OPTIONS'),
      route: fc.constantFrom('/api/v1/fees/preview', '/api/v1/fees/now', '/metrics', 'other'),
      status: fc.constantFrom(200, 402, 404, 429, 500, 502, 503),
      seconds: secondsArb,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('payment' as const),
      route: fc.constantFrom('/api/v1/fees/now', '/api/v1/broadcast'),
      outcome: fc.constantFrom<PaymentOutcome>(
        'settled',
        'replayed',
        'challenged',
        'rejected',
        'refused',
        'uncertain',
      ),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'scrape' as const }) },
);

async function exposition(registry: Registry) {
  const text: string[] = [];
  const json: unknown[] = [];
  for (const name of NAMES) {
    text.push(await registry.getSingleMetricAsString(name));
    json.push(await registry.getSingleMetric(name)!.get());
  }
  return { text, json };
}

describe('createServiceMetrics', () => {
  it('exposes what observing every request through prom-client exposes: names, labels, types, values, order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(eventArb, { maxLength: 120 }), async (events) => {
        const metrics = createServiceMetrics({ snapshots: noSnapshots });
        const reference = referenceMetrics();
        for (const event of events) {
          if (event.kind === 'request') {
            const labels = { method: event.method, route: event.route, status: event.status };
            metrics.observeRequest(labels, event.seconds);
            reference.observeRequest(labels, event.seconds);
          } else if (event.kind === 'payment') {
            metrics.observePayment({ route: event.route, outcome: event.outcome });
            reference.observePayment({ route: event.route, outcome: event.outcome });
          } else {
            expect(await exposition(metrics.registry)).toEqual(await exposition(reference.registry));
          }
        }
        expect(await exposition(metrics.registry)).toEqual(await exposition(reference.registry));
      }),
      { numRuns: 300 },
    );
  });

  it('serves the request series in the Prometheus text of the whole registry', async () => {
    const metrics = createServiceMetrics({ snapshots: noSnapshots });
    metrics.observeRequest({ method: 'GET', route: '/api/v1/fees/preview', status: 200 }, 0.003);
    metrics.observeRequest({ method: 'GET', route: '/api/v1/fees/preview', status: 200 }, 0.02);
    const text = await metrics.registry.metrics();
    expect(text).toContain('# TYPE fee_service_http_requests_total counter');
    expect(text).toContain(
      'fee_service_http_requests_total{method="GET",route="/api/v1/fees/preview",status="200"} 2',
    );
    expect(text).toContain('# TYPE fee_service_http_request_duration_seconds histogram');
    expect(text).toContain(
      'fee_service_http_request_duration_seconds_bucket{le="0.005",method="GET",route="/api/v1/fees/preview"} 1',
    );
    expect(text).toContain(
      'fee_service_http_request_duration_seconds_bucket{le="0.025",method="GET",route="/api/v1/fees/preview"} 2',
    );
    expect(text).toContain(
      'fee_service_http_request_duration_seconds_sum{method="GET",route="/api/v1/fees/preview"} 0.023',
    );
    expect(text).toContain('fee_service_snapshot_available 0');
    expect(text).toContain('fee_service_process_cpu_seconds_total');
  });
});

describe('payments counted apart', () => {
  const seen = (over: Partial<PaidExchangeView> = {}): PaidExchangeView => ({
    challenged: false,
    replayed: false,
    verified: false,
    failure: undefined,
    ...over,
  });

  it('tells a transfer from a replay of its stored answer and from refusals', () => {
    expect(paymentOutcomeOf(200, seen({ verified: true }))).toBe('settled');
    expect(paymentOutcomeOf(200, seen({ replayed: true }))).toBe('replayed');
    expect(paymentOutcomeOf(402, seen({ failure: 'invalid_exact_evm_payload_signature' }))).toBe('rejected');
    expect(paymentOutcomeOf(402, seen({ challenged: true }))).toBe('challenged');
    expect(paymentOutcomeOf(402)).toBe('challenged');
    expect(paymentOutcomeOf(400, seen({ failure: 'payment_payload_invalid' }))).toBe('invalid_request');
    expect(paymentOutcomeOf(429)).toBe('rate_limited');
  });

  it.each([
    [409, 'refused'],
    [422, 'refused'],
    [404, 'refused'],
    [400, 'refused'],
    [503, 'unavailable'],
    [500, 'not_charged'],
  ] as const)(
    'counts a verified payment whose resource answered %i itself as %s, not uncertain',
    (status, outcome) => {
      expect(paymentOutcomeOf(status, seen({ verified: true }))).toBe(outcome);
    },
  );

  it("keeps uncertain for the gate's unknown settlements, and a payment in progress apart", () => {
    expect(paymentOutcomeOf(502, seen({ verified: true, failure: 'settlement_uncertain' }))).toBe(
      'uncertain',
    );
    expect(paymentOutcomeOf(502, seen({ failure: 'settlement_uncertain' }))).toBe('uncertain');
    expect(paymentOutcomeOf(409, seen({ failure: 'payment_in_progress' }))).toBe('in_progress');
    expect(paymentOutcomeOf(409, seen({ failure: 'payment_identifier_conflict' }))).toBe('rejected');
    expect(paymentOutcomeOf(402, seen({ verified: true, failure: 'settlement_rejected' }))).toBe('rejected');
  });

  it('counts transfers once each, by route and by who confirmed them', async () => {
    const metrics = createServiceMetrics({ snapshots: noSnapshots });
    metrics.observeTransfer({ route: 'GET /api/v1/fees/now', via: 'request' });
    metrics.observeTransfer({ route: 'GET /api/v1/fees/now', via: 'request' });
    metrics.observeTransfer({ route: 'GET /api/v1/fees/now', via: 'reconciler' });
    const text = await metrics.registry.metrics();
    expect(text).toContain(
      'fee_service_payment_transfers_total{route="GET /api/v1/fees/now",via="request"} 2',
    );
    expect(text).toContain(
      'fee_service_payment_transfers_total{route="GET /api/v1/fees/now",via="reconciler"} 1',
    );
  });
});
