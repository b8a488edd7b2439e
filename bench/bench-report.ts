// One benchmark run's results as bench/run.ts saves them, and the lookups that the report and
// its targets make in them (a case of section 1, a micro-benchmark, a failed baseline).
import type { AiSectionResult } from './ai';
import type { ChainSectionResult } from './chain';
import type { DevnetSectionResult } from './devnet';
import type { LatencySectionResult } from './latency';
import type { BenchConfig } from './lib/config';
import type { CaseResult, HttpSectionResult } from './lib/http-case';
import type { MachineInfo } from './lib/machine';
import type { MicroResult, MicroSectionResult } from './lib/measure';
import { type Spread, spread } from './lib/stats';
import type { ObservatorySectionResult } from './observatory';
import type { ProfileSectionResult } from './profile';
import type { ScalingSectionResult } from './scaling';

export interface BenchReport {
  config: BenchConfig;
  machine: MachineInfo;
  startedAt: string;
  /** Written after a section while later ones still run: a run that stopped there leaves this. */
  partial?: boolean;
  elapsedSeconds?: number;
  signing?: { count: number; ms: number };
  http?: HttpSectionResult;
  micro?: MicroSectionResult;
  scaling?: ScalingSectionResult;
  devnet?: DevnetSectionResult;
  latency?: LatencySectionResult;
  profile?: ProfileSectionResult;
  observatory?: ObservatorySectionResult;
  ai?: AiSectionResult;
  chain?: ChainSectionResult;
  /** Sections not run this time, kept from the run that measured them (`--only`). */
  carried?: Partial<Record<string, { startedAt: string; quick: boolean }>>;
}

export function findCase(http: HttpSectionResult | undefined, id: string): CaseResult | undefined {
  return http?.cases.find((c) => c.id === id);
}

/** Per-round ratio of two cases' throughput (same round index). */
export function roundRatio(a: CaseResult | undefined, b: CaseResult | undefined): Spread | undefined {
  if (!a || !b) return undefined;
  return spread(a.samples.map((s, i) => s.rps / (b.samples[i]?.rps ?? Number.NaN)));
}

/** Per-round ratio of two cases' capacity: b's server CPU per request ÷ a's (same round index). */
export function roundCpuRatio(a: CaseResult | undefined, b: CaseResult | undefined): Spread | undefined {
  if (!a || !b) return undefined;
  return spread(a.samples.map((s, i) => (b.samples[i]?.cpuUs ?? Number.NaN) / s.cpuUs));
}

/**
 * The no-op row of a framework when it reads more than 15 % from bare. The two apps differ by one
 * empty middleware: one of the two processes then ran unlike the other for its whole life (seen
 * here: a bare Koa process at half the speed of four others started the same way), and every
 * ratio of that framework in the run is suspect.
 */
export function failedBaseline(r: BenchReport, key: string): CaseResult | undefined {
  const noop = findCase(r.http, `${key}/noop`);
  return noop?.cpuRatio && Math.abs(noop.cpuRatio.median - 1) > 0.15 ? noop : undefined;
}

export function microOf(r: BenchReport, name: string): MicroResult | undefined {
  return r.micro?.results.find((m) => m.name.startsWith(name));
}
