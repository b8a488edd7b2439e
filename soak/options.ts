// The soak's command line (`npm run soak -- …`, see soak/run.ts) checked once, and the seeded
// random numbers its fault schedule is drawn from.
import { parseArgs } from 'node:util';
import { FRAMEWORKS, type Framework } from '../test/support/fault-harness';

export interface SoakOptions {
  total: number;
  concurrency: number;
  framework: Framework;
  ledger: 'sqlite' | 'postgres';
  seed: string;
  faultEveryMs: number;
  /** No new payment is started after this long (the ones started are finished and checked). */
  maxMinutes: number;
  /** As given, for the report's command line. */
  maxMinutesGiven: string | undefined;
  report: string | undefined;
}

/** The options of `npm run soak`; throws naming the flag that is wrong. */
export function readSoakOptions(): SoakOptions {
  const { values } = parseArgs({
    options: {
      payments: { type: 'string', default: '10000' },
      concurrency: { type: 'string', default: '12' },
      framework: { type: 'string', default: 'fastify' },
      ledger: { type: 'string', default: 'sqlite' },
      seed: { type: 'string', default: '1' },
      'fault-every-ms': { type: 'string', default: '20000' },
      'max-minutes': { type: 'string' },
      report: { type: 'string' },
    },
  });
  const options: SoakOptions = {
    total: Number(values.payments),
    concurrency: Number(values.concurrency),
    framework: values.framework as Framework,
    ledger: values.ledger as 'sqlite' | 'postgres',
    seed: values.seed,
    faultEveryMs: Number(values['fault-every-ms']),
    maxMinutes:
      values['max-minutes'] === undefined ? Number.POSITIVE_INFINITY : Number(values['max-minutes']),
    maxMinutesGiven: values['max-minutes'],
    report: values.report,
  };
  const { total, concurrency, framework, ledger, faultEveryMs, maxMinutes } = options;
  if (!FRAMEWORKS.includes(framework)) throw new Error(`--framework must be one of ${FRAMEWORKS.join(', ')}`);
  if (ledger !== 'sqlite' && ledger !== 'postgres') throw new Error('--ledger must be sqlite or postgres');
  if (!(total > 0 && concurrency > 0 && faultEveryMs > 0 && maxMinutes > 0))
    throw new Error('--payments, --concurrency, --fault-every-ms and --max-minutes must be positive numbers');
  return options;
}

/** mulberry32: the fault schedule is reproducible from --seed. */
export function seededRandom(seed: string): () => number {
  let state = Number(seed) >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function log(message: string) {
  process.stderr.write(`[soak ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}
