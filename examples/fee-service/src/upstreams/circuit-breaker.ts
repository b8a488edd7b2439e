import { CircuitOpenError } from './errors';

export type CircuitState = 'closed' | 'open' | 'half-open';

export interface CircuitBreakerOptions {
  /** Name used in {@link CircuitOpenError}. Default `upstream`. */
  name?: string;
  /** Consecutive failures that open the circuit. Default 5. */
  failureThreshold?: number;
  /** Time the circuit stays open before one trial call is let through. Default 30,000 ms. */
  resetTimeoutMs?: number;
  /** Injectable clock in epoch ms. Default `Date.now`. */
  now?: () => number;
}

export const CIRCUIT_BREAKER_DEFAULTS = {
  name: 'upstream',
  failureThreshold: 5,
  resetTimeoutMs: 30_000,
} as const;

/**
 * A closed → open → half-open circuit breaker. Closed lets every call through and counts
 * consecutive failures; at the threshold it opens and fails calls fast with
 * {@link CircuitOpenError}; after `resetTimeoutMs` it half-opens and lets exactly one trial call
 * through, whose success closes it and whose failure opens it again.
 */
export interface CircuitBreaker {
  /** The state at `now` (an open circuit whose timeout passed reads half-open). */
  state(): CircuitState;
  /**
   * Runs `call` if the circuit allows it. `countsAsFailure` decides which errors say the upstream
   * is unhealthy (a 404 does not). @throws CircuitOpenError when open
   */
  run<T>(call: () => Promise<T>, countsAsFailure?: (error: unknown) => boolean): Promise<T>;
  /** Closes the circuit and clears the failure count. */
  reset(): void;
}

export function createCircuitBreaker(options: CircuitBreakerOptions = {}): CircuitBreaker {
  const name = options.name ?? CIRCUIT_BREAKER_DEFAULTS.name;
  const threshold = options.failureThreshold ?? CIRCUIT_BREAKER_DEFAULTS.failureThreshold;
  const resetTimeoutMs = options.resetTimeoutMs ?? CIRCUIT_BREAKER_DEFAULTS.resetTimeoutMs;
  const now = options.now ?? Date.now;
  const problems: string[] = [];
  if (!Number.isInteger(threshold) || threshold < 1) problems.push('failureThreshold must be an integer ≥ 1');
  if (!(resetTimeoutMs >= 0)) problems.push('resetTimeoutMs must be ≥ 0');
  if (problems.length > 0) throw new TypeError(`invalid circuit breaker options: ${problems.join('; ')}`);

  let failures = 0;
  let openedAt: number | undefined;
  let trialInFlight = false;

  const state = (): CircuitState => {
    if (openedAt === undefined) return 'closed';
    return now() - openedAt >= resetTimeoutMs ? 'half-open' : 'open';
  };

  return {
    state,
    reset() {
      failures = 0;
      openedAt = undefined;
      trialInFlight = false;
    },
    async run(call, countsAsFailure = () => true) {
      const current = state();
      if (current === 'open' || (current === 'half-open' && trialInFlight)) {
        throw new CircuitOpenError(name, (openedAt ?? now()) + resetTimeoutMs);
      }
      const isTrial = current === 'half-open';
      if (isTrial) trialInFlight = true;
      try {
        const result = await call();
        failures = 0;
        openedAt = undefined;
        return result;
      } catch (error) {
        if (countsAsFailure(error)) {
          failures += 1;
          if (isTrial || failures >= threshold) openedAt = now();
        } else if (isTrial) {
          // the upstream answered (e.g. 404): it is alive
          failures = 0;
          openedAt = undefined;
        }
        throw error;
      } finally {
        if (isTrial) trialInFlight = false;
      }
    },
  };
}
