// `npm start`: the fee service on embedded defaults (simulator upstream, devnet + in-process
// facilitator, SQLite ledger), or whatever the environment configures.
//
// Output: in a terminal (stdout a TTY), pino-pretty's lines and, once listening, a banner of
// where to go. Otherwise JSON lines only, one object per line (the `fee service listening` line
// carries the URL): no banner between them. A configuration that cannot work is written to
// stderr as the list of its problems (exit 2), never a stack; so is a store (ledger, rate-limit
// Redis, observatory history) that does not answer at start, one line per store.
import { TollboothConfigError } from '@tollbooth/core';
import { ConfigError, loadConfig } from './config';
import { startFeeService } from './service';
import { createServiceLogger } from './startup/logger';
import { ChainReaderMismatchError } from './startup/payments';
import { PortInUseError } from './startup/ports';
import { StoreUnavailableError } from './startup/stores';

/** Exit code of a configuration refused at start (variables, the facilitator's /supported, a store that does not answer). */
export const EXIT_CONFIG = 2;

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(EXIT_CONFIG);
    }
    throw error;
  }
  const terminal = process.stdout.isTTY === true;
  const logger = createServiceLogger(config.logLevel, { pretty: terminal });
  const service = await startFeeService(config, { logger });
  if (terminal) {
    console.log(`\nFee service listening on ${service.url} (canonical base URL ${service.baseUrl})`);
    console.log(`  dashboard:      ${service.baseUrl}/ (open it in a browser)`);
    console.log(`  free preview:   ${service.baseUrl}/api/v1/fees/preview`);
    const decision = service.publications.find((p) => p.resource.path === '/api/v1/fees/now');
    console.log(
      `  paid decision:  ${service.baseUrl}/api/v1/fees/now (${decision?.availability === 'active' ? '0.001 USDC' : (decision?.reason ?? 'paused')})`,
    );
    console.log(
      `  discovery:      ${service.baseUrl}/.well-known/x402, /discovery/resources, /api/openapi.json`,
    );
    if (service.simulator && !config.sources.mempool && !config.sources.esplora && !config.sources.core) {
      console.log(
        `  simulator:      ${service.simulator.url} (mempool.space; Esplora at /api; Core JSON-RPC at /), seed ${config.simulator.seed}`,
      );
    }
    if (service.devnet) {
      console.log(
        `  devnet:         ${service.devnet.rpcUrl} (chain ${service.devnet.chainId}), facilitator ${service.facilitatorUrl}`,
      );
      console.log(
        `  pay it:         npm run demo${service.url === 'http://127.0.0.1:3000' ? '' : ` -- --url ${service.url}`}`,
      );
      const payer = service.devnet.accounts.payers[0];
      if (payer)
        console.log(
          `  payer key:      ${payer.privateKey} (devnet only: TOLLBOOTH_PAYER_KEY of tollbooth-pay)`,
        );
      if (service.simulator)
        console.log(`  test tx:        npm run test-tx -- --simulator ${service.simulator.url}`);
    }
    console.log('');
  }

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'finishing in-flight requests and shutting down');
    service.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

main().catch((error: NodeJS.ErrnoException & { port?: number }) => {
  if (
    error instanceof TollboothConfigError ||
    error instanceof ChainReaderMismatchError ||
    error instanceof StoreUnavailableError
  ) {
    console.error(error.message);
    process.exit(EXIT_CONFIG);
  }
  console.error(
    error instanceof PortInUseError
      ? error.message
      : error.code === 'EADDRINUSE'
        ? `port ${error.port} is in use: set PORT to a free port`
        : error,
  );
  process.exit(1);
});
