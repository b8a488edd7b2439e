// The human report: one line per audit under a heading per section, the message of anything not
// passed beneath it, and a summary that says what the exit status means.
import { type AuditResult, type AuditStatus, summarize } from '../results';

const MARKS: Record<AuditStatus, string> = {
  passed: 'ok  ',
  failed: 'FAIL',
  skipped: 'skip',
  rate_limited: '429 ',
  error: 'ERR ',
};

/** The lines of one result: `FAIL FVER-10 MUST answer …` and its message, indented. */
export function resultLines(result: AuditResult): string[] {
  const lines = [`  ${MARKS[result.status]} ${result.id.padEnd(8)} ${result.sentence}`];
  if (result.message) lines.push(`       ${result.message}`);
  return lines;
}

/** `28 passed, 1 failed, …` and what it means for the exit status. */
export function summaryLine(results: readonly AuditResult[]): string {
  const s = summarize(results);
  const counts = [
    `${s.passed} passed`,
    `${s.failed} failed`,
    `${s.skipped} skipped`,
    ...(s.rateLimited ? [`${s.rateLimited} rate limited`] : []),
    ...(s.errors ? [`${s.errors} not run`] : []),
  ].join(', ');
  const verdict =
    s.mustFailed > 0
      ? `${s.mustFailed} MUST ${s.mustFailed === 1 ? 'rule is' : 'rules are'} broken`
      : s.mustUnjudged > 0
        ? `${s.mustUnjudged} MUST ${s.mustUnjudged === 1 ? 'rule' : 'rules'} could not be judged`
        : 'every MUST rule that applies is kept';
  return `${counts}: ${verdict}`;
}

/** Prints results as they arrive, with a heading whenever the section changes. */
export function createHumanPrinter(out: (line: string) => void, sectionOf: (result: AuditResult) => string) {
  let section: string | undefined;
  return (result: AuditResult) => {
    const heading = sectionOf(result);
    if (heading !== section) {
      section = heading;
      out('');
      out(heading);
    }
    for (const line of resultLines(result)) out(line);
  };
}

/** Response times per endpoint as a small table. */
export function timingLines(
  timings: Record<string, { count: number; medianMs: number; p95Ms: number; maxMs: number } | undefined>,
  labels: Record<string, string>,
): string[] {
  const rows = Object.entries(timings).filter(([, t]) => t !== undefined);
  if (rows.length === 0) return [];
  const cell = (n: number) => n.toFixed(1).padStart(8);
  return [
    '',
    `Response times (ms)  ${'calls'.padStart(5)} ${'median'.padStart(8)} ${'p95'.padStart(8)} ${'max'.padStart(8)}`,
    ...rows.map(
      ([name, t]) =>
        `  ${(labels[name] ?? name).padEnd(18)} ${String(t!.count).padStart(5)} ${cell(t!.medianMs)} ${cell(t!.p95Ms)} ${cell(t!.maxMs)}`,
    ),
  ];
}
