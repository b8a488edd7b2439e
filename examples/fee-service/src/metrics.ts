import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { SnapshotService } from './snapshot/service';

/** Prometheus metrics of one fee-service process (served at /metrics). */
export interface ServiceMetrics {
  registry: Registry;
  /** Records one finished HTTP request. */
  observeRequest(labels: { method: string; route: string; status: number }, seconds: number): void;
  /** Records the outcome of a request to a paid route. */
  observePayment(labels: { route: string; outcome: PaymentOutcome }): void;
}

/** What happened to a request on a paid route, from its final status. */
export type PaymentOutcome =
  | 'settled'
  | 'challenged'
  | 'rejected'
  | 'uncertain'
  | 'unavailable'
  | 'rate_limited'
  | 'invalid_request'
  | 'not_charged';

/** Classifies the final status of a paid-route request (a payment header present or not). */
export function paymentOutcomeOf(status: number, paid: boolean): PaymentOutcome {
  if (status < 300) return 'settled';
  if (status === 402) return paid ? 'rejected' : 'challenged';
  if (status === 429) return 'rate_limited';
  if (status === 502 || status === 409) return 'uncertain';
  if (status === 503) return 'unavailable';
  if (status === 400) return 'invalid_request';
  return 'not_charged';
}

/**
 * Creates the registry: `fee_service_http_requests_total`, `fee_service_http_request_duration_seconds`,
 * `fee_service_payments_total{route,outcome}`, `fee_service_snapshot_age_seconds`,
 * `fee_service_snapshot_available` and the default Node process metrics.
 */
export function createServiceMetrics(options: {
  snapshots: SnapshotService;
  now?: () => number;
}): ServiceMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'fee_service_' });
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
    help: 'Requests to paid routes by outcome (settled, challenged, rejected, uncertain, unavailable, …).',
    labelNames: ['route', 'outcome'] as const,
    registers: [registry],
  });
  const now = options.now ?? Date.now;
  new Gauge({
    name: 'fee_service_snapshot_age_seconds',
    help: 'Age of the last validated fee snapshot (absent when none was ever validated).',
    registers: [registry],
    collect() {
      const latest = options.snapshots.latest();
      this.reset();
      if (latest) this.set(Math.max(0, (now() - Date.parse(latest.fetched_at)) / 1000));
    },
  });
  new Gauge({
    name: 'fee_service_snapshot_available',
    help: '1 when a validated snapshot can be served (fresh or fallback), else 0.',
    registers: [registry],
    collect() {
      let available = 1;
      try {
        options.snapshots.current();
      } catch {
        available = 0;
      }
      this.set(available);
    },
  });
  return {
    registry,
    observeRequest(labels, seconds) {
      requests.inc({ method: labels.method, route: labels.route, status: String(labels.status) });
      latency.observe({ method: labels.method, route: labels.route }, seconds);
    },
    observePayment(labels) {
      payments.inc(labels);
    },
  };
}
