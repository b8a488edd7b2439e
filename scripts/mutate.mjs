#!/usr/bin/env node
// `npm run mutate [-- --area evm,stores] [--concurrency 2]`: one Stryker run per area (see
// scripts/mutate-areas.mjs), then a per-area summary from the JSON reports in reports/mutation/.
// Incremental: a rerun only tests the mutants whose code or covering tests changed.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
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

/** Counts a Stryker JSON report (mutation-testing-report-schema) by status. */
function count(file) {
  const report = JSON.parse(readFileSync(file, 'utf8'));
  const c = {
    Killed: 0,
    Survived: 0,
    Timeout: 0,
    NoCoverage: 0,
    CompileError: 0,
    RuntimeError: 0,
    Ignored: 0,
  };
  for (const f of Object.values(report.files))
    for (const m of f.mutants) c[m.status] = (c[m.status] ?? 0) + 1;
  return c;
}

const rows = [];
for (const name of chosen) {
  const file = `reports/mutation/${name}.json`;
  if (!existsSync(file)) {
    rows.push(`| ${name} | no report |`);
    continue;
  }
  const c = count(file);
  const detected = c.Killed + c.Timeout;
  const valid = detected + c.Survived + c.NoCoverage;
  const score = valid ? ((100 * detected) / valid).toFixed(1) : 'n/a';
  rows.push(
    `| ${name} | ${c.Killed} | ${c.Survived} | ${c.Timeout} | ${c.NoCoverage} | ${c.CompileError} | ${score} % |`,
  );
}
console.log('\n| area | killed | survived | timeout | no coverage | compile errors | score |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const row of rows) console.log(row);
process.exit(failed ? 1 : 0);
