// `npm run test-tx`: prints a signed transaction the embedded simulator of `npm start` accepts,
// ready for POST /api/v1/broadcast (docs: the fee service's README, "Try the broadcast").
import { parseArgs } from 'node:util';
import { spendableTestTransaction, TestTransactionError } from './test-tx';

const USAGE = `usage: npm run test-tx -- [--simulator URL] [--seed 42] [--fee-rate 2] [--json]
  Prints the hex of a signed transaction spending an unspent output of the simulator's faucet,
  accepted by its node (testmempoolaccept), for POST /api/v1/broadcast {"hex": …}.
  --simulator  the embedded simulator's URL, as npm start prints it (SIMULATOR_PORT pins it);
               default http://127.0.0.1:$SIMULATOR_PORT
  --seed       the simulator's seed (npm start's SIMULATOR_SEED); default $SIMULATOR_SEED or 42
  --fee-rate   sat/vB; default 2
  --json       print {hex, txid, vsize, fee_sat, fee_rate_sat_vb, spends, pays_to} instead
Exit codes: 0 printed, 1 no transaction (no simulator, another seed, every output spent), 2 bad arguments.`;

const { values } = parseArgs({
  options: {
    simulator: { type: 'string' },
    seed: { type: 'string' },
    'fee-rate': { type: 'string', default: '2' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const problems: string[] = [];
const port = process.env['SIMULATOR_PORT']?.trim();
const simulatorUrl = values.simulator ?? (port ? `http://127.0.0.1:${port}` : undefined);
if (!simulatorUrl || !URL.canParse(simulatorUrl))
  problems.push('--simulator: the simulator URL npm start prints (or set SIMULATOR_PORT)');
const seed = Number(values.seed ?? process.env['SIMULATOR_SEED'] ?? 42);
if (!Number.isSafeInteger(seed) || seed < 0) problems.push('--seed must be a whole number');
const feeRate = Number(values['fee-rate']);
if (!(feeRate > 0 && feeRate <= 1_000))
  problems.push('--fee-rate must be a rate in sat/vB, above 0 and at most 1000');
if (problems.length > 0 || !simulatorUrl) {
  console.error(`${problems.join('\n')}\n\n${USAGE}`);
  process.exit(2);
}

try {
  const tx = await spendableTestTransaction({ simulatorUrl, seed, feeRate });
  if (values.json) console.log(JSON.stringify(tx, null, 2));
  else {
    console.log(tx.hex);
    console.error(
      `txid ${tx.txid}: spends faucet output ${tx.spends.txid}:${tx.spends.vout} (${tx.spends.value_sat} sats), pays ${tx.fee_sat} sats at ${tx.fee_rate_sat_vb} sat/vB (${tx.vsize} vB) back to ${tx.pays_to}`,
    );
  }
} catch (error) {
  console.error(error instanceof TestTransactionError ? error.message : error);
  process.exit(1);
}
