/**
 * A seeded pseudo-random generator for the simulator.
 *
 * Why our own: `Math.random` cannot be seeded, and the simulator must answer byte-identically for
 * the same seed on every machine and Node version. mulberry32 is a public-domain 32-bit generator:
 * five lines, fast, a 2^32 period and good enough equidistribution for arrival times and fee
 * draws. It is not cryptographic and does not need to be; hashes and txids are derived with SHA-256
 * from the seed and a counter instead, so they look real.
 */
export interface Prng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform in [min, max). */
  uniform(min: number, max: number): number;
  /** Integer in [0, n). */
  int(n: number): number;
  /** Exponentially distributed with the given mean. */
  exponential(mean: number): number;
  /** Standard normal (Box–Muller). */
  normal(): number;
  /** Log-normal with the given median and shape sigma. */
  logNormal(median: number, sigma: number): number;
}

/** Creates a mulberry32 generator from a 32-bit seed. */
export function createPrng(seed: number): Prng {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const normal = () => {
    const u = 1 - next(); // (0, 1]: log is finite
    const v = next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  };
  return {
    next,
    uniform: (min, max) => min + (max - min) * next(),
    int: (n) => Math.floor(next() * n),
    exponential: (mean) => -mean * Math.log(1 - next()),
    normal,
    logNormal: (median, sigma) => median * Math.exp(sigma * normal()),
  };
}
