#!/usr/bin/env node
/**
 * `tollbooth-devnet`: starts a local chain with a funded EIP-3009 token and prints everything needed
 * to pay x402 APIs against it, then stays up until Ctrl-C.
 */
import { parseArgs } from 'node:util';
import { DEVNET_DEFAULTS, type DevnetTokenKind, type StartDevnetOptions } from './devnet-options';
import { DevnetError } from './errors';
import { startDevnet } from './start-devnet';

const USAGE = `Usage: tollbooth-devnet [options]

Starts anvil with Multicall3 and a funded USDC-like EIP-3009 token for offline x402 payments.

Options:
  --chain-id <id>        chain id (default ${DEVNET_DEFAULTS.chainId}; 8453 and 84532 put the token at the real USDC address)
  --port <port>          loopback port (default: a free port)
  --token <kind>         tollbooth | circle (default ${DEVNET_DEFAULTS.token}; circle = Circle's FiatTokenV2_2)
  --payers <n>           funded payer accounts (default ${DEVNET_DEFAULTS.payers})
  --payer-balance <n>    atomic token units per payer (default ${DEVNET_DEFAULTS.payerBalance})
  --no-canonical         deploy the token at a fresh address instead of the canonical USDC address
  --anvil <path>         the anvil binary to run (default: $ANVIL_PATH, else the anvil npm package
                         of this platform, else anvil on PATH)
  -h, --help             show this help

Exit codes: 0 stopped by Ctrl-C or SIGTERM, 1 the devnet could not start (no anvil, anvil
failed, set-up reverted; the error code and message are printed), 2 bad arguments.`;

function parseInteger(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new Error(`--${name} must be a non-negative integer (got ${value})`);
  return Number(value);
}

function parseOptions(argv: string[]): StartDevnetOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    options: {
      'chain-id': { type: 'string' },
      port: { type: 'string' },
      token: { type: 'string' },
      payers: { type: 'string' },
      'payer-balance': { type: 'string' },
      'no-canonical': { type: 'boolean' },
      anvil: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) return 'help';
  const balance = values['payer-balance'];
  if (balance !== undefined && !/^\d+$/.test(balance)) {
    throw new Error(`--payer-balance must be a non-negative integer (got ${balance})`);
  }
  return {
    chainId: parseInteger('chain-id', values['chain-id']),
    port: parseInteger('port', values.port),
    token: values.token as DevnetTokenKind | undefined,
    payers: parseInteger('payers', values.payers),
    payerBalance: balance === undefined ? undefined : BigInt(balance),
    atCanonicalAddress: values['no-canonical'] ? false : undefined,
    anvilPath: values.anvil,
  };
}

function formatUnits6(amount: bigint): string {
  const whole = amount / 1_000_000n;
  const fraction = (amount % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : `${whole}`;
}

async function main(): Promise<void> {
  let options: StartDevnetOptions | 'help';
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  if (options === 'help') {
    console.log(USAGE);
    return;
  }

  const devnet = await startDevnet(options);
  const { token, accounts } = devnet;
  const balance = formatUnits6(options.payerBalance ?? DEVNET_DEFAULTS.payerBalance);
  const lines = [
    'Tollbooth devnet is running',
    '',
    `RPC URL      ${devnet.rpcUrl}`,
    `Chain id     ${devnet.chainId} (network eip155:${devnet.chainId})`,
    `Token        ${token.address} (${token.kind === 'circle' ? "Circle's FiatTokenV2_2" : 'TollboothUSD'})`,
    `  EIP-712    name "${token.name}", version "${token.version}"; symbol ${token.symbol}, ${token.decimals} decimals`,
    `Multicall3   ${devnet.multicall3}`,
    '',
    'LOCAL TEST KEYS ONLY — from the public anvil mnemonic; never use them on a real network.',
    '',
    `Facilitator  ${accounts.facilitator.address}  key ${accounts.facilitator.privateKey}`,
    `Pay to       ${accounts.payTo.address}  key ${accounts.payTo.privateKey}`,
    `Deployer     ${accounts.deployer.address}  key ${accounts.deployer.privateKey}  (token owner and minter)`,
    `Payers (${balance} ${token.symbol} each):`,
    ...accounts.payers.map((p, i) => `  #${i}  ${p.address}  key ${p.privateKey}`),
    '',
    'Press Ctrl-C to stop.',
  ];
  // Handlers go in before the ready lines are printed: whoever waits for those lines may signal at once.
  let stopping = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping the devnet…`);
    devnet.stop().then(
      () => {
        console.log('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  console.log(lines.join('\n'));

  // Keep the event loop alive until a signal arrives.
  setInterval(() => {}, 1 << 30);
}

main().catch((error: unknown) => {
  if (error instanceof DevnetError) console.error(`${error.code}: ${error.message}`);
  else console.error(error);
  process.exit(1);
});
