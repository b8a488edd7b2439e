// The AI resources' part of docs/benchmarks.md: their target row and their section.
import type { AiSectionResult } from './ai';
import { fmt, fmtSpread } from './lib/stats';

export function aiTarget(result: AiSectionResult | undefined): {
  target: string;
  figure: string;
  verdict: 'met' | 'missed' | 'not measured';
  why?: string;
} {
  const target = 'AI answers, deterministic: ≤ 5 ms of CPU each (analyst ≤ 25 ms) on the simulator’s data';
  if (!result) return { target, figure: 'n/a', verdict: 'not measured' };
  const worst = result.cases
    .filter((c) => c.id !== 'analyst')
    .sort((a, b) => b.cpuMs.median - a.cpuMs.median)[0]!;
  const analyst = result.cases.find((c) => c.id === 'analyst')!;
  const ok = result.cases.every((c) => c.cpuMs.median <= c.targetMs);
  return {
    target,
    figure: `slowest ${worst.id} ${fmt(worst.cpuMs.median, 2)} ms, analyst ${fmt(analyst.cpuMs.median, 2)} ms`,
    verdict: ok ? 'met' : 'missed',
    why: 'Median CPU per answer over interleaved rounds, from the upstream texts to the answer’s JSON. Section 8.',
  };
}

export function renderAiSection(result: AiSectionResult): string[] {
  const d = result.data;
  return [
    '## 8. AI answers without a model',
    '',
    `Each AI resource's handler, called in process with no model configured: from the upstream's response texts (replayed, parsed with the client's zod schemas) through the analysis, the prose and the answer's JSON text. The data is the simulator's (seed ${result.seed}): block ${fmt(d.blockHeight)} with ${fmt(d.blockTxCount)} transactions, and the largest of the first 200 mempool transactions (${d.txInputs} inputs, ${d.txOutputs} outputs). CPU is \`process.cpuUsage()\` over ${fmt(result.cases[0]?.answersPerRound ?? 0)} answers per case and round, the cases interleaved round by round; median (min–max) over the rounds. Network time is left out: it is the upstream's, not the answer's.`,
    '',
    '| Answer | CPU per answer | Target | Answer size |',
    '|---|---:|---:|---:|',
    ...result.cases.map(
      (c) =>
        `| ${c.label} | ${fmtSpread(c.cpuMs, 3, ' ms')} | ≤ ${c.targetMs} ms | ${fmt(c.bytes / 1024, 1)} KiB |`,
    ),
    '',
    'The block explainer reads the block summary of every transaction (notable transactions) and the 14 blocks before it; the chat searches the MiniSearch index built once per process; the analyst runs its steps one after another in process (the explainer step included), so it costs about the sum of theirs.',
    '',
  ];
}
