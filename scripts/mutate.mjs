#!/usr/bin/env node
// `npm run mutate [-- --area evm,stores] [--concurrency 2]`: one Stryker run per area (see
// scripts/mutate-areas.mjs), then a per-area summary from the JSON reports in reports/mutation/.
// Incremental: a rerun only tests the mutants whose code or covering tests changed.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { relative } from 'node:path';
import { areas } from './mutate-areas.mjs';

const args = process.argv.slice(2);
const option = (flag) => {
  const i = args.indexOf(flag);
  return i >= 0 ? args[i + 1] : undefined;
};
const chosen = (option('--area') ?? Object.keys(areas).join(',')).split(',').filter(Boolean);
for (const name of chosen) {
  if (!areas[name]) {
    console.error(`unknown area ${name}; areas: ${Object.keys(areas).join(', ')}`);
    process.exit(2);
  }
}
const summaryOnly = args.includes('--summary');

let failed = false;
if (!summaryOnly) {
  for (const name of chosen) {
    console.log(`\n== mutate: ${name}`);
    rmSync(`reports/mutation/${name}.json`, { force: true });
    const run = spawnSync('npx', ['stryker', 'run', 'stryker.config.mjs'], {
      stdio: 'inherit',
      env: {
        ...process.env,
        MUTATE_AREA: name,
        MUTATE_CONCURRENCY: option('--concurrency') ?? process.env.MUTATE_CONCURRENCY ?? '1',
      },
    });
    if (run.status !== 0) failed = true;
  }
}

/**
 * The area's mutants with their status: from the JSON report of a finished run, else from the
 * events a run records as it goes (then `partial`).
 */
function results(name) {
  const file = `reports/mutation/${name}.json`;
  if (existsSync(file)) {
    const report = JSON.parse(readFileSync(file, 'utf8'));
    const mutants = Object.entries(report.files).flatMap(([path, f]) =>
      f.mutants.map((m) => ({ ...m, path })),
    );
    return { mutants, partial: false };
  }
  const dir = `reports/mutation/${name}-events`;
  if (!existsSync(dir)) return undefined;
  const mutants = readdirSync(dir)
    .filter((f) => f.endsWith('-onMutantTested.json'))
    .map((f) => JSON.parse(readFileSync(`${dir}/${f}`, 'utf8')))
    .map((m) => ({ ...m, path: m.fileName }));
  return { mutants, partial: true };
}

const rows = [];
const survivors = [];
for (const name of chosen) {
  const found = results(name);
  if (!found) {
    rows.push(`| ${name} | no report | | | | | |`);
    continue;
  }
  const c = { Killed: 0, Survived: 0, Timeout: 0, NoCoverage: 0, CompileError: 0 };
  for (const m of found.mutants) {
    c[m.status] = (c[m.status] ?? 0) + 1;
    if (m.status === 'Survived' || m.status === 'NoCoverage') {
      const where = `${relative(process.cwd(), m.path)}:${m.location.start.line}:${m.location.start.column}`;
      survivors.push(`${name} ${m.status} ${where} ${m.mutatorName}: ${JSON.stringify(m.replacement ?? '')}`);
    }
  }
  const detected = c.Killed + c.Timeout;
  const valid = detected + c.Survived + c.NoCoverage;
  const score = valid ? `${((100 * detected) / valid).toFixed(1)} %` : 'n/a';
  const label = found.partial ? `${name} (partial)` : name;
  rows.push(
    `| ${label} | ${c.Killed} | ${c.Survived} | ${c.Timeout} | ${c.NoCoverage} | ${c.CompileError} | ${score} |`,
  );
}
console.log('\n| area | killed | survived | timeout | no coverage | compile errors | score |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const row of rows) console.log(row);
if (args.includes('--survivors')) for (const line of survivors) console.log(line);
process.exit(failed ? 1 : 0);
