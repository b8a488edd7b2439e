// Runs the mempool simulator alone:
//   node --conditions=tollbooth-source --import tsx examples/fee-service/src/simulator/cli.ts --scenario calm --seed 42 --port 8999
import { parseArgs } from 'node:util';
import { isScenarioName, SCENARIO_NAMES } from './scenarios';
import { startMempoolSimulator } from './server';

const { values } = parseArgs({
  options: {
    scenario: { type: 'string', default: 'calm' },
    seed: { type: 'string', default: '42' },
    port: { type: 'string', default: '8999' },
    host: { type: 'string', default: '127.0.0.1' },
    'time-scale': { type: 'string', default: '1' },
    help: { type: 'boolean', default: false },
  },
});

if (values.help) {
  console.log(
    `usage: cli.ts [--scenario ${SCENARIO_NAMES.join('|')}] [--seed 42] [--port 8999] [--host 127.0.0.1] [--time-scale 1]`,
  );
  process.exit(0);
}
const problems: string[] = [];
if (!isScenarioName(values.scenario)) problems.push(`--scenario must be one of ${SCENARIO_NAMES.join(', ')}`);
const seed = Number(values.seed);
const port = Number(values.port);
const timeScale = Number(values['time-scale']);
if (!Number.isInteger(seed)) problems.push('--seed must be an integer');
if (!Number.isInteger(port) || port < 0 || port > 65535) problems.push('--port must be 0..65535');
if (!(timeScale >= 0)) problems.push('--time-scale must be ≥ 0');
if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(2);
}

const sim = await startMempoolSimulator({
  scenario: values.scenario as (typeof SCENARIO_NAMES)[number],
  seed,
  port,
  host: values.host,
  timeScale,
});
console.log(`mempool simulator: scenario ${values.scenario}, seed ${seed}, time ×${timeScale}`);
console.log(`  mempool.space  ${sim.url}`);
console.log(`  esplora        ${sim.esploraUrl}`);
console.log(`  core rpc       ${sim.coreRpcUrl}`);
const shutdown = () => {
  void sim.close().then(() => process.exit(0));
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
