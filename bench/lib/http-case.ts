// The HTTP section's cases and results: what bench/http.ts builds, bench/lib/run-cases.ts runs,
// and bench/report.ts, bench/scaling.ts and bench/profile.ts read.
import type { ServerProcess } from './server-process';
import type { Spread } from './stats';

export type CaseKind =
  | 'bare'
  | 'noop'
  | 'pass'
  | 'bytes402'
  | '402'
  | 'paid'
  | 'replay'
  | 'bytesreplay'
  | 'official-pass'
  | 'official-402'
  | 'fee-bare'
  | 'fee-preview'
  | 'mcp-paid';

export interface HttpCase {
  id: string;
  framework: string;
  label: string;
  kind: CaseKind;
  server: ServerProcess;
  path: string;
  /** Id of the case whose throughput this one is compared with (same round). */
  baseline?: string;
  expectStatus: number;
  /** Fixed header set, or a per-request header from a pool (or, for a tool call, a request body). */
  headers?: Record<string, string>;
  pool?: { headers: string[]; next: number; bodies?: string[] };
}

export interface RunSample {
  rps: number;
  p50: number;
  p99: number;
  /** Server CPU (user + system) per request, µs. */
  cpuUs: number;
  /** Share of one core the server and the load generator (this process) used during the run, %. */
  serverBusy: number;
  clientBusy: number;
  requests: number;
  unexpected: number;
  errors: number;
}

export interface CaseResult {
  id: string;
  framework: string;
  label: string;
  kind: CaseKind;
  baseline?: string;
  samples: RunSample[];
  rps: Spread;
  p50: Spread;
  p99: Spread;
  cpuUs: Spread;
  serverBusy: Spread;
  clientBusy: Spread;
  /** Throughput / baseline throughput, per round. */
  ratio?: Spread;
  /** CPU per request minus the baseline's, per round, µs. */
  extraCpuUs?: Spread;
  /** Baseline CPU per request / this case's: the throughput ratio if both were bound by the server's CPU. */
  cpuRatio?: Spread;
  unexpected: number;
  errors: number;
  mode: string;
}

export interface HttpSectionResult {
  cases: CaseResult[];
  notes: string[];
  rounds: number;
  durationSeconds: number;
  warmupSeconds: number;
  connections: number;
  paidPerRun: number;
  rewarmSeconds: number;
  rewarmPayments: number;
}
