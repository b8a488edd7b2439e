// Mutation testing (StrykerJS) for the code where a bug costs money or access: `npm run mutate`
// (all areas) or `npm run mutate -- --area evm,stores`. Not part of `npm test`. docs/testing.md
// explains the areas, the scores and the mutants that are equivalent.
//
// One area per Stryker run: the area is read from MUTATE_AREA (scripts/mutate.mjs sets it), so
// each area keeps its own incremental file and report and only runs the tests that exercise it.
import { areas } from './scripts/mutate-areas.mjs';

const name = process.env.MUTATE_AREA;
const area = areas[name];
if (!area) {
  throw new Error(`MUTATE_AREA must be one of ${Object.keys(areas).join(', ')} (got ${name})`);
}

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  testRunner: 'vitest',
  // The sandbox's vitest config points every @tollbooth/* import at the sandbox's (mutated)
  // sources: through node_modules they would resolve to the checkout's unmutated files.
  vitest: { configFile: 'vitest.mutate.config.ts', related: false },
  // The checker drops mutants that do not compile. It type-checks the area's own sources and
  // what they import (scripts/mutate-tsconfig/<area>.json, no tests): the whole project takes
  // minutes to load on a busy machine, for each area.
  checkers: ['typescript'],
  tsconfigFile: `scripts/mutate-tsconfig/${name}.json`,
  typescriptChecker: { prioritizePerformanceOverAccuracy: true },
  coverageAnalysis: 'perTest',
  // Static mutants (module-level values such as the zod schemas) need every test rerun in a fresh
  // environment each; they are left out and docs/testing.md says so.
  ignoreStatic: true,
  mutate: area.mutate,
  testFiles: area.tests,
  // Two CPUs, shared: one test worker and one checker by default (MUTATE_CONCURRENCY raises it).
  concurrency: Number(process.env.MUTATE_CONCURRENCY ?? 1),
  // Tests that start anvil, Redis or Postgres clients need headroom on a loaded machine.
  timeoutMS: 20_000,
  timeoutFactor: 2.5,
  dryRunTimeoutMinutes: 30,
  incremental: true,
  incrementalFile: `reports/mutation/${name}.incremental.json`,
  // event-recorder: each tested mutant is written to reports/mutation/<area>-events/ as it is
  // done, so a run stopped early still shows what it found (scripts/mutate.mjs --summary reads it).
  reporters: ['json', 'clear-text', 'progress-append-only', 'event-recorder'],
  eventReporter: { baseDir: `reports/mutation/${name}-events` },
  jsonReporter: { fileName: `reports/mutation/${name}.json` },
  clearTextReporter: { allowColor: false, logTests: false, maxTestsToLog: 0, reportScoreTable: true },
  tempDirName: `.stryker-tmp/${name}`,
  cleanTempDir: 'always',
  // Other areas' sandboxes too (.stryker-tmp/<area>): a run beside another would copy its files
  // as they come and go, and stop on one that is gone (ENOENT).
  ignorePatterns: [
    '.packs',
    'reports',
    'coverage',
    '.tollbooth',
    '**/*.sqlite*',
    'docs/images',
    '.stryker-tmp',
  ],
  thresholds: { high: 90, low: 80, break: null },
};
