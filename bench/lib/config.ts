// Benchmark settings from flags and environment variables. `--quick` is for development: short
// runs, fewer rounds, small pools. Every setting can be overridden one by one.
import { parseArgs } from 'node:util';

export type Section =
  | 'http'
  | 'micro'
  | 'devnet'
  | 'latency'
  | 'scaling'
  | 'profile'
  | 'observatory'
  | 'ai'
  | 'chain';
export const SECTIONS: readonly Section[] = [
  'http',
  'micro',
  'devnet',
  'latency',
  'scaling',
  'profile',
  'observatory',
  'ai',
  'chain',
];

export interface BenchConfig {
  quick: boolean;
  sections: Section[];
  /** Interleaved rounds after the warm-up. */
  rounds: number;
  /** Seconds of each timed HTTP run. */
  durationSeconds: number;
  /** Seconds of the warm-up run of each case. */
  warmupSeconds: number;
  /** Seconds of the unmeasured run right before every measured one (0: none). */
  rewarmSeconds: number;
  /** Payments of that run for paid cases. */
  rewarmPayments: number;
  /** autocannon connections. */
  connections: number;
  /** Paid requests per run (each needs a distinct pre-signed payment). */
  paidPerRun: number;
  /** Devnet: concurrent payers and payments per payer. */
  payers: number;
  paymentsPerPayer: number;
  /** Micro-benchmarks: batches per measure. */
  batches: number;
  /** Scaling: rounds and seconds per run. */
  scalingRounds: number;
  scalingSeconds: number;
  /** Where the report is written; `--no-write` only prints it. */
  output: string | undefined;
  /** Re-render the report from a run's saved results (the JSON written beside the report). */
  render: string | undefined;
}

const HELP = `npm run bench -- [options]
  --quick                 short development run (2 rounds x 1 s, small pools)
  --only=http,micro,...   sections: ${SECTIONS.join(', ')}
  --rounds=N              interleaved rounds (default 5; env BENCH_ROUNDS)
  --duration=S            seconds per timed HTTP run (default 3; env BENCH_DURATION)
  --warmup=S              warm-up seconds per case (default 1.5; env BENCH_WARMUP)
  --rewarm=S              unmeasured seconds right before every measured run (default 0.5, 0 for
                          none; env BENCH_REWARM); paid cases send --rewarm-paid=N payments
                          instead (default 2000; env BENCH_REWARM_PAID)
  --connections=N         autocannon connections (default 50; env BENCH_CONNECTIONS)
  --paid=N                paid requests per run (default 4000; env BENCH_PAID)
  --payers=N --payments=N devnet payers and payments each (default 20 x 25)
  --only=latency          a paid request's latency on the devnet (blocks every 2 s, the facilitator
                          50 ms away each way): Tollbooth on each framework beside the official
                          @x402/express (env BENCH_LATENCY_DELAY_MS, BENCH_LATENCY_BLOCK_SECONDS)
  --only=observatory      the fee observatory alone (scoreboard over 10^4..10^6 estimates, the
                          recorder per poll); a run of some sections keeps the other sections'
                          results of the previous run (from the saved JSON) and says so
  --only=ai               the AI resources' deterministic answers alone (CPU per answer on the
                          simulator's data); other sections kept from the last run
  --only=chain            the next block, the fee landscape and the broadcast checks alone (CPU
                          per answer from a cached reading); other sections kept from the last run
  --out=PATH              report path (default docs/benchmarks.md); --no-write to print only; the
                          run's results are saved beside it as JSON (docs/benchmarks.json)
  --render=PATH           no run: render the report again from saved results (after a change to
                          the report's text)`;

export function readConfig(argv: readonly string[] = process.argv.slice(2)): BenchConfig {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      quick: { type: 'boolean', default: process.env['BENCH_QUICK'] === '1' },
      only: { type: 'string' },
      rounds: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      rewarm: { type: 'string' },
      'rewarm-paid': { type: 'string' },
      connections: { type: 'string' },
      paid: { type: 'string' },
      payers: { type: 'string' },
      payments: { type: 'string' },
      out: { type: 'string' },
      'no-write': { type: 'boolean', default: false },
      render: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(HELP);
    process.exit(0);
  }
  const quick = values.quick === true;
  const problems: string[] = [];
  const num = (flag: string | undefined, env: string, full: number, fast: number, min = 1): number => {
    const raw = flag ?? process.env[env];
    if (raw === undefined) return quick ? fast : full;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min) {
      problems.push(`${env.toLowerCase()} must be a number >= ${min} (got ${raw})`);
      return full;
    }
    return value;
  };
  const only = values.only ?? process.env['BENCH_ONLY'];
  const sections = only ? (only.split(',').map((s) => s.trim()) as Section[]) : [...SECTIONS];
  for (const s of sections) if (!SECTIONS.includes(s)) problems.push(`unknown section "${s}"`);
  const config: BenchConfig = {
    quick,
    sections,
    rounds: num(values.rounds, 'BENCH_ROUNDS', 5, 2),
    durationSeconds: num(values.duration, 'BENCH_DURATION', 3, 1),
    warmupSeconds: num(values.warmup, 'BENCH_WARMUP', 1.5, 1, 0),
    rewarmSeconds: num(values.rewarm, 'BENCH_REWARM', 0.5, 0.5, 0),
    rewarmPayments: num(values['rewarm-paid'], 'BENCH_REWARM_PAID', 2000, 100),
    connections: num(values.connections, 'BENCH_CONNECTIONS', 50, 50),
    paidPerRun: num(values.paid, 'BENCH_PAID', 4000, 300),
    payers: num(values.payers, 'BENCH_PAYERS', 20, 5),
    paymentsPerPayer: num(values.payments, 'BENCH_PAYMENTS', 25, 4),
    batches: num(undefined, 'BENCH_BATCHES', 9, 5),
    scalingRounds: num(undefined, 'BENCH_SCALING_ROUNDS', 3, 2),
    scalingSeconds: num(undefined, 'BENCH_SCALING_SECONDS', 1.5, 1),
    output: values['no-write'] ? undefined : (values.out ?? 'docs/benchmarks.md'),
    render: values.render,
  };
  if (problems.length > 0) {
    console.error(`invalid benchmark options:\n- ${problems.join('\n- ')}\n\n${HELP}`);
    process.exit(2);
  }
  return config;
}
