// `npm start`: the fee service on embedded defaults (simulator upstream, devnet + in-process
// facilitator, SQLite ledger), or whatever the environment configures.
import { ConfigError, loadConfig } from './config';
import { startFeeService } from './service';
import { ChainReaderMismatchError } from './startup/payments';

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
  const service = await startFeeService(config);
  console.log(`Fee service listening on ${service.url} (canonical base URL ${service.baseUrl})`);
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
    console.log('  pay it:         npm run demo');
  }

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: finishing in-flight requests and shutting down`);
    service.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

main().catch((error: NodeJS.ErrnoException & { port?: number }) => {
  if (error instanceof ChainReaderMismatchError) {
    console.error(error.message);
    process.exit(2);
  }
  console.error(
    error.code === 'EADDRINUSE' ? `port ${error.port} is in use: set PORT to a free port` : error,
  );
  process.exit(1);
});
