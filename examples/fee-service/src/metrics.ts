import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { SnapshotService } from './snapshot/service';

/** Prometheus metrics of one fee-service process (served at /metrics). */
export interface ServiceMetrics {
  registry: Registry;
  /** Records one finished HTTP request. */
  observeRequest(labels: { method: string; route: string; status: number }, seconds: number): void;
  /** Records the outcome of a request to a paid route. */
  observePayment(labels: { route: string; outcome: PaymentOutcome }): void;
  /**
   * Records one transfer (money moved), once per payment whoever confirmed it: the paying request,
   * a retry of an uncertain one, or the reconciler (`via`). Replays never count here.
   */
  observeTransfer(labels: { route: string; via: string }): void;
}

/** What happened to a request on a paid route, from its final status and what the gate reported. */
export type PaymentOutcome =
  | 'settled'
  | 'signed_in'
  | 'replayed'
  | 'challenged'
  | 'rejected'
  | 'refused'
  | 'uncertain'
  | 'in_progress'
  | 'unavailable'
  | 'rate_limited'
  | 'invalid_request'
  | 'not_charged';

/** What the gate's hooks told of one paid-route request (see `startup/paid-exchanges.ts`). */
export interface PaidExchangeView {
  /** Answered the plain challenge: it carried no payment. */
  challenged: boolean;
  /** Let in by sign-in-with-x: access an earlier payment bought, nothing paid now. */
  signedIn?: boolean;
  /** Answered with a settled payment's stored response. */
  replayed: boolean;
  /** Its payment was verified and the resource's handler ran. */
  verified: boolean;
  /** The code of the gate's own refusal or failure, when the gate answered it. */
  failure: string | undefined;
}

/**
 * Classifies a paid-route request (`exchange` undefined: the gate never saw it, e.g. the rate
 * limit answered first). A verified payment whose resource answered an error itself — a broadcast
 * the node refuses (409, 422), a transaction not found — is `refused`: released, nothing charged.
 * `uncertain` is only the gate's 502, a settlement whose outcome is unknown (the one to alert on);
 * the gate's 409 for a payment another request is processing is `in_progress`.
 */
export function paymentOutcomeOf(status: number, exchange?: PaidExchangeView): PaymentOutcome {
  if (status < 300) return exchange?.signedIn ? 'signed_in' : exchange?.replayed ? 'replayed' : 'settled';
  if ((exchange?.verified || exchange?.signedIn) && exchange.failure === undefined) {
    return status < 500 ? 'refused' : status === 503 ? 'unavailable' : 'not_charged';
  }
  if (status === 402) return exchange && !exchange.challenged ? 'rejected' : 'challenged';
  if (status === 429) return 'rate_limited';
  if (status === 502) return 'uncertain';
  if (status === 409) return exchange?.failure === 'payment_in_progress' ? 'in_progress' : 'rejected';
  if (status === 503) return 'unavailable';
  if (status === 400) return 'invalid_request';
  return 'not_charged';
}

/** Upper bounds of the request latency histogram, seconds. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const;

type RequestLabels = { method: string; route: string; status: string };
type PaymentLabels = { route: string; outcome: PaymentOutcome };

/** One labelled counter series, counted in process and handed to prom-client when scraped. */
interface CountedSeries<L> {
  labels: L;
  count: number;
}

/** One labelled histogram series: observations per bucket (not cumulative), their count and sum. */
interface LatencySeries {
  labels: { method: string; route: string };
  buckets: number[];
  count: number;
  sum: number;
}

/** The per-(method, route) state a finished request updates: its latency and its counts by status. */
interface RouteSeries {
  latency: LatencySeries;
  byStatus: Map<number, CountedSeries<RequestLabels>>;
}

/** The entry prom-client keeps per label set of a histogram (what `zero(labels)` creates). */
interface HistogramEntry {
  labels: object;
  bucketValues: Record<string, number>;
  sum: number;
  count: number;
}

/**
 * Creates the registry: `fee_service_http_requests_total`, `fee_service_http_request_duration_seconds`,
 * `fee_service_payments_total{route,outcome}`, `fee_service_payment_transfers_total{route,via}`,
 * `fee_service_snapshot_age_seconds`,
 * `fee_service_snapshot_available` and the default Node process metrics.
 *
 * Requests and payments are counted in plain maps keyed by their labels (no label hashing per
 * request) and handed to prom-client by each metric's `collect()` when /metrics is scraped; the
 * exposition is what observing every request through prom-client gives, series in first-seen order.
 */
export function createServiceMetrics(options: {
  snapshots: SnapshotService;
  now?: () => number;
}): ServiceMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'fee_service_' });

  // route → method → series; each list keeps first-seen order, as prom-client's own maps do.
  const routes = new Map<string, Map<string, RouteSeries>>();
  const requestSeries: CountedSeries<RequestLabels>[] = [];
  const latencySeries: LatencySeries[] = [];
  const payments = new Map<string, Map<PaymentOutcome, CountedSeries<PaymentLabels>>>();
  const paymentSeries: CountedSeries<PaymentLabels>[] = [];

  new Counter({
    name: 'fee_service_http_requests_total',
    help: 'HTTP requests by method, route and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const series of requestSeries) this.inc(series.labels, series.count);
    },
  });
  new Histogram({
    name: 'fee_service_http_request_duration_seconds',
    help: 'HTTP request latency by method and route (including payment verification and settlement).',
    labelNames: ['method', 'route'] as const,
    buckets: [...LATENCY_BUCKETS],
    registers: [registry],
    collect() {
      this.reset();
      // prom-client has no public setter for a histogram's state: `zero()` creates the entry and
      // its counts are filled in (the test compares the exposition with observing each request).
      for (const series of latencySeries) this.zero(series.labels);
      const entries = Object.values((this as unknown as { hashMap: Record<string, HistogramEntry> }).hashMap);
      latencySeries.forEach((series, at) => {
        const entry = entries[at]!;
        LATENCY_BUCKETS.forEach((bound, index) => {
          entry.bucketValues[bound] = series.buckets[index]!;
        });
        entry.count = series.count;
        entry.sum = series.sum;
      });
    },
  });
  new Counter({
    name: 'fee_service_payments_total',
    help: 'Requests to paid routes by outcome (settled, signed_in, replayed, challenged, rejected, refused, uncertain, in_progress, unavailable, …).',
    labelNames: ['route', 'outcome'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const series of paymentSeries) this.inc(series.labels, series.count);
    },
  });
  const transfers = new Counter({
    name: 'fee_service_payment_transfers_total',
    help: 'Payments that moved money, once each, by route key and by who confirmed it (request, retry, reconciler).',
    labelNames: ['route', 'via'] as const,
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

  function routeSeries(method: string, route: string): RouteSeries {
    let byMethod = routes.get(route);
    if (byMethod === undefined) {
      byMethod = new Map();
      routes.set(route, byMethod);
    }
    let series = byMethod.get(method);
    if (series === undefined) {
      series = { latency: { labels: { method, route }, buckets: [], count: 0, sum: 0 }, byStatus: new Map() };
      series.latency.buckets = LATENCY_BUCKETS.map(() => 0);
      byMethod.set(method, series);
    }
    return series;
  }

  return {
    registry,
    observeRequest({ method, route, status }, seconds) {
      if (!Number.isFinite(seconds)) throw new TypeError(`Value is not a valid number: ${seconds}`);
      const series = routeSeries(method, route);
      let counted = series.byStatus.get(status);
      if (counted === undefined) {
        counted = { labels: { method, route, status: String(status) }, count: 0 };
        series.byStatus.set(status, counted);
        requestSeries.push(counted);
      }
      counted.count += 1;
      const latency = series.latency;
      if (latency.count === 0) latencySeries.push(latency);
      // The first bucket whose bound holds the value (none above the last bound: only +Inf).
      for (let index = 0; index < LATENCY_BUCKETS.length; index++) {
        if (seconds <= LATENCY_BUCKETS[index]!) {
          latency.buckets[index]! += 1;
          break;
        }
      }
      latency.count += 1;
      latency.sum += seconds;
    },
    observePayment({ route, outcome }) {
      let byOutcome = payments.get(route);
      if (byOutcome === undefined) {
        byOutcome = new Map();
        payments.set(route, byOutcome);
      }
      let counted = byOutcome.get(outcome);
      if (counted === undefined) {
        counted = { labels: { route, outcome }, count: 0 };
        byOutcome.set(outcome, counted);
        paymentSeries.push(counted);
      }
      counted.count += 1;
    },
    observeTransfer(labels) {
      transfers.inc(labels);
    },
  };
}
