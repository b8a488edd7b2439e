import type { Findings } from './findings';
import type { PlannedStep, StepName } from './plan';

/**
 * What a step hands back: a one-sentence summary, its evidence (the facts it computed) and the
 * findings of that evidence a conclusion combines.
 */
export interface StepOutput {
  summary: string;
  evidence: unknown;
  findings?: Findings;
}

/** Why a step produced no evidence. `not_found` and `bad_input` concern the client's target. */
export class StepFailure extends Error {
  override readonly name = 'StepFailure';
  constructor(
    readonly kind: 'not_found' | 'bad_input' | 'unavailable' | 'failed',
    message: string,
  ) {
    super(message);
  }
}

/** Runs one step in process (never over HTTP, so the analyst never pays itself). */
export type StepRunner = (args: Record<string, string>, signal: AbortSignal) => Promise<StepOutput>;
/** The steps this deployment can run; a missing one is reported as unavailable. */
export type AnalystToolbox = Partial<Record<StepName, StepRunner>>;

export interface StepReport {
  step: StepName;
  args: Record<string, string>;
  why: string;
  status: 'ok' | 'not_found' | 'bad_input' | 'unavailable' | 'failed' | 'timed_out';
  summary: string;
  evidence: unknown;
  /** Not reported on the wire (the evidence holds them): what the conclusion combines. */
  findings?: Findings;
  duration_ms: number;
}

/** Default wall-clock budget of one analyst request's steps. */
export const ANALYST_TIME_BUDGET_MS = 5_000;

/**
 * Runs planned steps one after another within a time budget. A step still running when the budget
 * ends is aborted and reported `timed_out`, and the steps after it are not started. Results are
 * memoised by step and arguments in `memo`, so a model's plan and the fallback plan share them.
 */
export async function runSteps(options: {
  steps: readonly PlannedStep[];
  toolbox: AnalystToolbox;
  budgetMs?: number;
  now?: () => number;
  memo?: Map<string, StepReport>;
}): Promise<StepReport[]> {
  const now = options.now ?? performance.now.bind(performance);
  const deadline = now() + (options.budgetMs ?? ANALYST_TIME_BUDGET_MS);
  const reports: StepReport[] = [];
  let spent = false;
  for (const planned of options.steps) {
    if (spent) {
      reports.push({
        ...planned,
        status: 'timed_out',
        summary: 'not started: the time budget was spent.',
        evidence: null,
        duration_ms: 0,
      });
      continue;
    }
    const report = await runStep({
      planned,
      toolbox: options.toolbox,
      deadline,
      now,
      ...(options.memo ? { memo: options.memo } : {}),
    });
    spent = report.status === 'timed_out';
    reports.push(report);
  }
  return reports;
}

/** Runs one planned step before `deadline` (on the `now` clock). */
export async function runStep(options: {
  planned: PlannedStep;
  toolbox: AnalystToolbox;
  deadline: number;
  now: () => number;
  memo?: Map<string, StepReport>;
}): Promise<StepReport> {
  const { planned, toolbox, now } = options;
  const key = `${planned.step}:${JSON.stringify(planned.args)}`;
  const cached = options.memo?.get(key);
  if (cached) return { ...cached, why: planned.why };
  const base = { step: planned.step, args: planned.args, why: planned.why };
  const runner = toolbox[planned.step];
  const started = now();
  const remaining = options.deadline - started;
  let report: StepReport;
  if (!runner) {
    report = {
      ...base,
      status: 'unavailable',
      summary: `${planned.step} is not available in this deployment.`,
      evidence: null,
      duration_ms: 0,
    };
  } else if (remaining <= 0) {
    report = {
      ...base,
      status: 'timed_out',
      summary: 'not started: the time budget was spent.',
      evidence: null,
      duration_ms: 0,
    };
  } else {
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new StepFailure('failed', 'timed_out'));
      }, remaining);
    });
    try {
      const output = await Promise.race([runner(planned.args, controller.signal), timeout]);
      report = {
        ...base,
        status: 'ok',
        summary: output.summary,
        evidence: output.evidence,
        ...(output.findings ? { findings: output.findings } : {}),
        duration_ms: 0,
      };
    } catch (error) {
      const timedOut = controller.signal.aborted;
      const kind = error instanceof StepFailure ? error.kind : 'failed';
      report = {
        ...base,
        status: timedOut ? 'timed_out' : kind,
        summary: timedOut ? 'stopped: the time budget ran out.' : (error as Error).message,
        evidence: null,
        duration_ms: 0,
      };
    } finally {
      clearTimeout(timer);
    }
  }
  report.duration_ms = Math.round((now() - started) * 10) / 10;
  if (report.status === 'ok' || report.status === 'not_found') options.memo?.set(key, report);
  return report;
}
