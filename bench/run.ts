// `npm run bench`: runs the benchmark sections and writes docs/benchmarks.md (GitHub issue 8).
// Never part of `npm test`. `npm run bench -- --quick` for a short development run,
// `--only=http,micro` for some sections, `--help` for every option.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runAiSection } from './ai';
import type { BenchReport } from './bench-report';
import { runChainSection } from './chain';
import { runDevnetSection } from './devnet';
import { runHttpSection } from './http';
import { runLatencySection } from './latency';
import { readConfig, SECTIONS } from './lib/config';
import { describeMachine, sampleLoad } from './lib/machine';
import { paidOpsNeeded } from './lib/measure';
import { benchChallenge, benchPayers, signPaymentPool } from './lib/payments';
import type { ServerProcess } from './lib/server-process';
import { runMicroSection } from './micro';
import { runObservatorySection } from './observatory';
import { runProfileSection } from './profile';
import { renderReport } from './report';
import { runScalingSection } from './scaling';

const config = readConfig();

/**
 * A run of some sections keeps the other sections' results of the previous full or partial run
 * (the saved JSON), so `--only=observatory` does not drop the HTTP tables; the report names the run
 * each carried section comes from.
 */
function carryOver(report: BenchReport, savedPath: string): void {
  if (!existsSync(savedPath)) return;
  const saved = JSON.parse(readFileSync(savedPath, 'utf8')) as BenchReport;
  const carried: NonNullable<BenchReport['carried']> = {};
  for (const section of SECTIONS) {
    if (config.sections.includes(section)) continue;
    const previous = saved[section];
    if (previous === undefined) continue;
    (report as unknown as Record<string, unknown>)[section] = previous;
    carried[section] = saved.carried?.[section] ?? { startedAt: saved.startedAt, quick: saved.config.quick };
  }
  if (saved.signing && !report.signing) report.signing = saved.signing;
  if (Object.keys(carried).length > 0) report.carried = carried;
}
const outputPath = config.output
  ? resolve(fileURLToPath(new URL('..', import.meta.url)), config.output)
  : undefined;
if (config.render) {
  // The saved results of an earlier run, rendered with today's report code; figures unchanged.
  const saved = JSON.parse(readFileSync(config.render, 'utf8')) as BenchReport;
  const markdown = renderReport(saved);
  if (outputPath) writeFileSync(outputPath, markdown);
  else console.log(markdown);
  process.exit(0);
}
const machine = describeMachine();
const stopSampling = sampleLoad(machine);
const started = performance.now();
const log = (line: string) =>
  console.log(`[${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`);
const servers: ServerProcess[] = [];
const stopServers = async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop().catch(() => {})));
};
process.once('SIGINT', () => {
  void stopServers().then(() => process.exit(130));
});

const report: BenchReport = { config, machine, startedAt: new Date().toISOString() };
// Read before the first section's partial results replace the saved ones.
if (outputPath && config.sections.length < SECTIONS.length)
  carryOver(report, outputPath.replace(/\.md$/, '') + '.json');
/** The results as JSON beside the report, so its text can be rendered again (--render) without a run. */
const writeResults = (results: BenchReport) =>
  writeFileSync(
    outputPath!.replace(/\.md$/, '') + '.json',
    `${JSON.stringify(results, (_key, value) => (typeof value === 'bigint' ? value.toString() : value), 1)}\n`,
  );
/**
 * The report so far, after each section, and its results: a later section that fails or hangs
 * loses only itself (the sections measured before it are kept, rendered and as JSON).
 */
const writePartial = () => {
  if (!outputPath) return;
  report.elapsedSeconds = (performance.now() - started) / 1000;
  const partial = { ...report, partial: true };
  writeFileSync(outputPath, renderReport(partial));
  writeResults(partial);
};
try {
  log(`load average ${machine.loadBefore.map((l) => l.toFixed(2)).join(' ')} on ${machine.cpus} CPUs`);
  const wants = (s: (typeof config.sections)[number]) => config.sections.includes(s);
  const rewarmNeed = config.rewarmSeconds > 0 ? config.rounds * config.rewarmPayments : 0;
  const httpNeed = wants('http') ? (1 + config.rounds) * config.paidPerRun + rewarmNeed + 1 : 0;
  const microNeed = wants('micro') || wants('scaling') ? paidOpsNeeded(config.batches) + 1 : 0;
  const poolSize = Math.max(httpNeed, microNeed, wants('profile') ? 4001 : 0);
  const pool = await signPaymentPool({
    count: poolSize,
    challenge: benchChallenge(),
    accounts: benchPayers(8),
    onProgress: (n) => log(`  signed ${n}/${poolSize} payments`),
  });
  if (poolSize > 0) {
    report.signing = { count: poolSize, ms: pool.signingMs };
    log(`signed ${poolSize} distinct EIP-3009 payments with viem in ${(pool.signingMs / 1000).toFixed(1)} s`);
  }

  if (wants('micro')) {
    log('micro-benchmarks');
    report.micro = await runMicroSection(config, pool, log);
    writePartial();
  }
  if (wants('http')) {
    log('HTTP benchmarks');
    report.http = await runHttpSection(config, pool, log, servers);
    await stopServers();
    writePartial();
  }
  if (wants('scaling')) {
    log('scaling');
    report.scaling = await runScalingSection(config, pool, log, servers);
    await stopServers();
    writePartial();
  }
  if (wants('devnet')) {
    log('devnet end-to-end');
    report.devnet = await runDevnetSection(config, log, servers);
    await stopServers();
    writePartial();
  }
  if (wants('latency')) {
    log('paid request latency on the devnet');
    report.latency = await runLatencySection(config, log, servers);
    await stopServers();
    writePartial();
  }
  if (wants('profile')) {
    log('CPU profiles');
    report.profile = await runProfileSection(config, pool, log, servers);
    await stopServers();
    writePartial();
  }
  if (wants('observatory')) {
    log('fee observatory');
    report.observatory = await runObservatorySection(config, log);
    writePartial();
  }
  if (wants('ai')) {
    log('AI answers');
    report.ai = await runAiSection(config, log);
    writePartial();
  }
  if (wants('chain')) {
    log('chain-data resources');
    report.chain = await runChainSection(config, log);
  }
} finally {
  await stopServers();
  stopSampling();
}
report.elapsedSeconds = (performance.now() - started) / 1000;
const markdown = renderReport(report);
if (outputPath) {
  writeFileSync(outputPath, markdown);
  writeResults(report);
  log(`wrote ${config.output} (${report.elapsedSeconds.toFixed(0)} s in all)`);
} else {
  console.log(markdown);
}
process.exit(0);
