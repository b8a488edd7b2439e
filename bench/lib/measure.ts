// Measuring in-process operations (sections 3 and 4): the median of repeated batches in µs per
// operation, wall time (performance.now) and CPU (process.cpuUsage), after one warm-up batch.
import { type Spread, spread } from './stats';

export interface MicroResult {
  group: string;
  name: string;
  /** Wall time per operation, µs. */
  wallUs: Spread;
  /** CPU (user + system) per operation, µs. */
  cpuUs: Spread;
  opsPerBatch: number;
  note?: string;
  /**
   * Durable ledger rows of one paid request (#38 part 5): the synchronous commits the ledger asks
   * the store for per paid request (its writes not marked `durable: false`); not counted during the
   * run — test/ledger-synchronous-commits.test.ts reads the same count from the databases. The targets judge "≤ 2 per paid request" on the rows
   * of group 'durable ledger stores' whose name starts with 'SQLite' / 'PostgreSQL' and that have it.
   */
  syncCommits?: number;
  /**
   * The same paid request's wall time per operation done the way the ledger did it before
   * (claim + three separate commits), measured in the same run: "PostgreSQL's wall halved" is
   * judged as `wallUs.median / beforeWallUs.median ≤ 0.5`.
   */
  beforeWallUs?: Spread;
}

export interface MicroSectionResult {
  results: MicroResult[];
  notes: string[];
}

type Op = (i: number) => unknown;

/**
 * Paid-path measures: a warm-up long enough for V8 to optimise the whole path (the first couple of
 * thousand payments run several times slower), then batches of this many payments.
 */
export const PAID_WARMUP_OPS = 2000;
export const PAID_OPS = 300;

/** Distinct payments one paid-path measure uses. */
export const paidOpsNeeded = (batches: number) => PAID_WARMUP_OPS + batches * PAID_OPS;

/**
 * Runs `batches` batches of `ops` operations after one warm-up batch of `warmupOps` (default
 * `ops`); awaits each op if it returns a promise.
 */
export async function measure(
  group: string,
  name: string,
  ops: number,
  batches: number,
  op: Op,
  note?: string,
  warmupOps = ops,
): Promise<MicroResult> {
  const wall: number[] = [];
  const cpu: number[] = [];
  let i = 0;
  for (let b = 0; b <= batches; b++) {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const count = b === 0 ? warmupOps : ops;
    for (let k = 0; k < count; k++) {
      const r = op(i++);
      if (r instanceof Promise) await r;
    }
    const t1 = performance.now();
    const c = process.cpuUsage(cpu0);
    if (b === 0) continue; // warm-up
    wall.push(((t1 - t0) * 1000) / ops);
    cpu.push((c.user + c.system) / ops);
  }
  return {
    group,
    name,
    wallUs: spread(wall),
    cpuUs: spread(cpu),
    opsPerBatch: ops,
    ...(note ? { note } : {}),
  };
}
