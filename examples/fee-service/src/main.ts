// `npm start`: the fee service on embedded defaults (simulator upstream, devnet + in-process
// facilitator, SQLite ledger), or whatever the environment configures.
//
// Output: in a terminal (stdout a TTY), pino-pretty's lines and, once listening, a banner of
// where to go. Otherwise JSON lines only, one object per line (the `fee service listening` line
// carries the URL): no banner between them. A configuration that cannot work is written to
// stderr as the list of its problems (exit 2), never a stack.
import { TollboothConfigError } from '@tollbooth/core';
import { ConfigError, loadConfig } from './config';
import { startFeeService } from './service';
import { createServiceLogger } from './startup/logger';
import { ChainReaderMismatchError } from './startup/payments';

/** Exit code of a configuration refused at start (variables, or the facilitator's /supported). */
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
    console.log(
      `  paid decision:  ${service.baseUrl}/api/v1/fees/now (${config.profile === 'production' ? 'paused in the production profile' : '0.001 USDC'})`,
    );
    console.log(
      `  discovery:      ${service.baseUrl}/.well-known/x402, /discovery/resources, /api/openapi.json`,
    );
    if (service.devnet) {
      console.log(
        `  devnet:         ${service.devnet.rpcUrl} (chain ${service.devnet.chainId}), facilitator ${service.facilitatorUrl}`,
      );
      console.log(
        `  pay it:         npm run demo${service.url === 'http://127.0.0.1:3000' ? '' : ` -- --url ${service.url}`}`,
      );
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
  if (error instanceof TollboothConfigError || error instanceof ChainReaderMismatchError) {
    console.error(error.message);
    process.exit(EXIT_CONFIG);
  }
  console.error(
    error.code === 'EADDRINUSE' ? `port ${error.port} is in use: set PORT to a free port` : error,
  );
  process.exit(1);
});
