// npm run observatory:report -- [--history URL | --simulate] [--hours 168] [--step 6] [--out FILE]
//
// Writes the observatory's report (scoreboard and per-horizon charts) as one self-contained HTML
// file. By default it reads the history `npm start` records (beside the ledger); `--simulate`
// instead runs the simulator's chain forward (a day by default) through the recorder into a
// temporary history, with no network and nothing else running.
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { CONFIG_DEFAULTS, historyUrlBesideLedger } from '../../config';
import { SCENARIO_NAMES, type ScenarioName } from '../../simulator/scenarios';
import { startMempoolSimulator } from '../../simulator/server';
import { createBitcoinCoreClient } from '../../upstreams/bitcoin-core';
import { createEsploraClient } from '../../upstreams/esplora';
import { createMempoolSpaceClient } from '../../upstreams/mempool-space';
import { openHistory } from '../history/open';
import { createObservatory } from './observatory';
import { createRecorder } from './recorder';
import { buildObservatoryReport } from './report';
import { observatoryChain, observatorySources, recordFastForward } from './setup';

const { values } = parseArgs({
  options: {
    history: { type: 'string' },
    simulate: { type: 'boolean', default: false },
    blocks: { type: 'string', default: '144' },
    scenario: { type: 'string', default: 'calm' },
    seed: { type: 'string', default: '42' },
    hours: { type: 'string' },
    step: { type: 'string' },
    out: { type: 'string', default: 'observatory-report.html' },
    help: { type: 'boolean', default: false },
  },
});

if (values.help) {
  console.log(`usage: npm run observatory:report -- [--history sqlite:FILE|postgres://…] [--simulate [--blocks 144] [--scenario ${SCENARIO_NAMES.join('|')}] [--seed 42]]
                     [--hours N] [--step N] [--out observatory-report.html]`);
  process.exit(0);
}
const problems: string[] = [];
const positive = (name: string, text: string | undefined, max = Number.MAX_SAFE_INTEGER) => {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > max) problems.push(`--${name} must be a whole number 1…${max}`);
  return n;
};
const hours = positive('hours', values.hours, 720);
const step = positive('step', values.step, 720);
const blocks = positive('blocks', values.blocks, 5000) ?? 144;
const seed = Number(values.seed);
if (!Number.isInteger(seed)) problems.push('--seed must be an integer');
if (!(SCENARIO_NAMES as readonly string[]).includes(values.scenario)) {
  problems.push(`--scenario must be one of ${SCENARIO_NAMES.join(', ')}`);
}
if (values.simulate && values.history) problems.push('--simulate and --history exclude each other');
if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(2);
}

// npm runs a workspace script in the workspace's folder; a relative --out means where npm was run.
const out = resolve(process.env.INIT_CWD ?? process.cwd(), values.out);
if (values.simulate) {
  const simulator = await startMempoolSimulator({ scenario: values.scenario as ScenarioName, seed });
  const history = openHistory('sqlite::memory:');
  try {
    await history.migrate();
    const upstreams = {
      mempool: createMempoolSpaceClient({ baseUrl: simulator.url }),
      esplora: createEsploraClient({ baseUrl: simulator.esploraUrl }),
      core: createBitcoinCoreClient({
        url: simulator.coreRpcUrl,
        username: simulator.rpcUser,
        password: simulator.rpcPassword,
      }),
    };
    const now = () => simulator.model.nowMs;
    const recorder = createRecorder({
      history,
      chain: observatoryChain(upstreams)!,
      sources: observatorySources(upstreams),
      now,
    });
    const ran = await recordFastForward({
      simulator: { advance: (ms) => simulator.advance(ms), tipHeight: () => simulator.model.tipHeight() },
      recorder,
      blocks,
      pollEveryMs: 120_000,
    });
    const observatory = createObservatory({ history, now });
    const html = await buildObservatoryReport(observatory, {
      hours: hours ?? Math.max(1, Math.ceil((ran.ticks * 120_000) / 3_600_000)),
      ...(step ? { stepHours: step } : {}),
      provenance: `the mempool simulator (scenario ${values.scenario}, seed ${seed}), ${ran.blocks} blocks recorded through its mempool.space, Esplora and Core dialects, one poll per 2 simulated minutes`,
    });
    writeFileSync(out, html);
  } finally {
    await history.close();
    await simulator.close();
  }
} else {
  const url =
    values.history ??
    process.env.HISTORY_URL ??
    historyUrlBesideLedger(process.env.LEDGER_URL ?? CONFIG_DEFAULTS.LEDGER_URL);
  const history = openHistory(url);
  try {
    await history.migrate();
    const observatory = createObservatory({ history });
    writeFileSync(
      out,
      await buildObservatoryReport(observatory, {
        ...(hours ? { hours } : {}),
        ...(step ? { stepHours: step } : {}),
      }),
    );
  } finally {
    await history.close();
  }
}
console.log(`observatory report written to ${out}`);
