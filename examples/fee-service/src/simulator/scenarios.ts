/** A fee-rate population: log-normal around `median` sat/vB. */
export interface FeeDistribution {
  median: number;
  sigma: number;
}

/** Parameters of one named scenario. */
export interface ScenarioParameters {
  /** Transactions arriving per simulated second. */
  arrivalsPerSecond: number;
  /** Fee rates of new arrivals; `spikeShare` of them come from `spike`. */
  fees: FeeDistribution;
  spike?: FeeDistribution & { share: number };
  /** Minimum relay fee, sat/vB (0.1 on Core ≥ 29.1, 1 before). */
  minRelayFee: number;
  /** Virtual size of the mempool when the scenario starts fresh. */
  initialMempoolVsize: number;
  /** Extra high-fee load present at start (the spike itself), vB. */
  initialSpikeVsize: number;
  /** The fee endpoints answer 503 `Service Unavailable` (mempool backend out of sync). */
  feesDown: boolean;
  /** Esplora /fee-estimates quotes a 3-block rate above the 2-block one (non-monotonic). */
  nonMonotonicEstimates: boolean;
}

export const SCENARIO_NAMES = ['calm', 'backlog', 'spike', 'sub-sat', 'upstream-down'] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];

/**
 * The named scenarios. Block space is 1,000,000 vB per 600 s ≈ 1,667 vB/s; mean transaction is
 * ≈ 320 vB, so `arrivalsPerSecond` × 320 against 1,667 says whether the backlog grows.
 */
export const SCENARIOS: Record<ScenarioName, ScenarioParameters> = {
  /** A quiet mempool of one or two blocks, low single-digit rates. */
  calm: {
    arrivalsPerSecond: 3.5,
    fees: { median: 3, sigma: 0.6 },
    minRelayFee: 1,
    initialMempoolVsize: 1_600_000,
    initialSpikeVsize: 0,
    feesDown: false,
    nonMonotonicEstimates: false,
  },
  /** More than 8 blocks waiting and arrivals above capacity. */
  backlog: {
    arrivalsPerSecond: 6,
    fees: { median: 14, sigma: 0.9 },
    minRelayFee: 1,
    initialMempoolVsize: 14_000_000,
    initialSpikeVsize: 0,
    feesDown: false,
    nonMonotonicEstimates: true,
  },
  /** A burst of urgent high-fee transactions on top of a cheap mempool: a steep fee curve. */
  spike: {
    arrivalsPerSecond: 5,
    fees: { median: 4, sigma: 0.5 },
    spike: { median: 90, sigma: 0.25, share: 0.35 },
    minRelayFee: 1,
    initialMempoolVsize: 3_000_000,
    initialSpikeVsize: 1_400_000,
    feesDown: false,
    nonMonotonicEstimates: true,
  },
  /** Core ≥ 29.1 relay floor of 0.1 sat/vB: precise rates below 1. */
  'sub-sat': {
    arrivalsPerSecond: 3,
    fees: { median: 0.4, sigma: 0.6 },
    minRelayFee: 0.1,
    initialMempoolVsize: 1_300_000,
    initialSpikeVsize: 0,
    feesDown: false,
    nonMonotonicEstimates: false,
  },
  /** The calm chain keeps moving but every fee endpoint answers 503 `Service Unavailable`. */
  'upstream-down': {
    arrivalsPerSecond: 3.5,
    fees: { median: 3, sigma: 0.6 },
    minRelayFee: 1,
    initialMempoolVsize: 1_600_000,
    initialSpikeVsize: 0,
    feesDown: true,
    nonMonotonicEstimates: false,
  },
};

export function isScenarioName(name: string): name is ScenarioName {
  return (SCENARIO_NAMES as readonly string[]).includes(name);
}
