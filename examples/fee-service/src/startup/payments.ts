import {
  checkFacilitatorSupport,
  createHttpFacilitatorClient,
  type FacilitatorClient,
  isFacilitatorError,
  type SchemeServer,
} from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { createExactEvmFacilitator, createExactEvmScheme } from '@tollbooth/evm';
import { startFacilitatorServer } from '@tollbooth/facilitator';
import type { Logger } from 'pino';
import type { PaymentTerms } from '../capabilities/payment-terms';
import type { ServiceConfig } from '../config';
import type { CleanupStack } from './cleanup';
import { facilitatorAuthHeaders } from './facilitator-auth';
import { listenOn } from './ports';

export interface StartedPayments {
  /** The devnet, when the facilitator is in-process. */
  devnet: Devnet | undefined;
  /** The facilitator's base URL (the in-process one when FACILITATOR_URL is unset). */
  facilitatorUrl: string;
  facilitator: FacilitatorClient;
  terms: PaymentTerms;
  schemes: SchemeServer[];
}

function chainIdOf(network: string): number {
  return Number(network.slice('eip155:'.length));
}

/**
 * Step 2: the payment side. A configured facilitator URL, else a devnet (anvil with the EIP-3009
 * token) and the in-process EVM facilitator served over HTTP; the HTTP facilitator client; the
 * payment terms; the `exact` EVM scheme.
 */
export async function startPayments(
  config: ServiceConfig,
  overrides: { devnet?: Devnet },
  cleanups: CleanupStack,
  logger: Logger,
): Promise<StartedPayments> {
  let devnet = overrides.devnet;
  let facilitatorUrl = config.facilitator.url;
  if (!facilitatorUrl) {
    if (!devnet) {
      const port = config.embeddedPorts.devnet;
      const started = await listenOn('DEVNET_PORT', port, () =>
        startDevnet({ chainId: chainIdOf(config.payment.network), ...(port ? { port } : {}) }),
      );
      devnet = started;
      cleanups.push('devnet', () => started.stop());
      logger.info({ rpcUrl: started.rpcUrl, token: started.token.address }, 'devnet started');
    }
    const inProcess = createExactEvmFacilitator({
      account: devnet.accounts.facilitator.privateKey,
      chain: devnet.chain,
      rpcUrl: devnet.rpcUrl,
    });
    const port = config.embeddedPorts.facilitator;
    const served = await listenOn('FACILITATOR_PORT', port, () =>
      startFacilitatorServer({ facilitator: inProcess, ...(port ? { port } : {}) }),
    );
    cleanups.push('facilitator', () => served.close());
    facilitatorUrl = served.url;
    logger.info({ url: served.url }, 'in-process facilitator started');
  } else {
    devnet = undefined;
  }
  const facilitator = createHttpFacilitatorClient({
    url: facilitatorUrl,
    timeoutMs: config.facilitator.timeoutMs,
    settleTimeoutMs: config.facilitator.settleTimeoutMs,
    ...(config.facilitator.auth && config.facilitator.url
      ? { createAuthHeaders: facilitatorAuthHeaders(config.facilitator.auth, config.facilitator.url) }
      : {}),
  });
  await checkSupport(facilitator, facilitatorUrl, config.payment.network, logger);
  const terms: PaymentTerms = {
    network: config.payment.network,
    payTo: config.payment.payTo ?? devnet!.accounts.payTo.address,
    asset: config.payment.asset,
    assetName: config.payment.assetName,
    assetVersion: config.payment.assetVersion,
  };
  // The chain judges uncertain settlements and confirms reported ones: the devnet's own node, else
  // RPC_URL. Without either only the facilitator's word counts (refused in the production profile).
  const scheme = createExactEvmScheme(
    devnet ? { publicClient: devnet.publicClient } : { rpcUrl: config.chainReaders },
  );
  if (!devnet) await checkChainReaders(config, scheme, logger);
  return { devnet, facilitatorUrl, facilitator, terms, schemes: [scheme] };
}

/** Thrown at start-up when a chain reader serves another chain than its network. */
export class ChainReaderMismatchError extends Error {
  readonly code = 'chain_reader_mismatch';
}

/**
 * Says at start what the chain reader can guarantee: a node of another chain stops the start
 * (it would judge payments wrongly), an unreachable one is a warning (readiness reports it, the
 * reconciler asks it again), and no reader at all is a loud warning.
 */
async function checkChainReaders(config: ServiceConfig, scheme: SchemeServer, logger: Logger): Promise<void> {
  const network = config.payment.network;
  if (!config.chainReaders[network]) {
    logger.warn(
      { code: 'no_chain_reader', network },
      `RPC_URL is not set: no chain reader for ${network}. A settlement whose facilitator answer is lost or fails stays uncertain (502 settlement_uncertain) until a retry happens to get a facilitator answer, and a reported settlement is taken on the facilitator's word. Set RPC_URL (required in the production profile).`,
    );
    return;
  }
  const status = await scheme.chainStatus!(network);
  if (status.ok) {
    logger.info({ network, blockNumber: status.blockNumber?.toString() }, 'chain reader answers');
    return;
  }
  if (/ serves eip155:\d+, not /.test(status.message)) {
    throw new ChainReaderMismatchError(`RPC_URL: ${status.message} (NETWORK is ${network})`);
  }
  logger.warn(
    { code: 'chain_reader_unavailable', network, detail: status.message },
    'the chain reader (RPC_URL) does not answer yet: uncertain settlements wait for it',
  );
}

/**
 * Asks the facilitator's `/supported` whether it settles `exact` payments on the configured
 * network. An answer without it refuses the start (TollboothConfigError: nobody could settle
 * what the service would sell); no answer (down, timeout, 5xx) only warns, since a facilitator
 * that is restarting should not keep the service down: `/readyz` reports it until it answers.
 */
async function checkSupport(
  facilitator: FacilitatorClient,
  url: string,
  network: string,
  logger: Logger,
): Promise<void> {
  try {
    await checkFacilitatorSupport({
      facilitator,
      kinds: [{ scheme: 'exact', network, x402Version: 2 }],
      name: `the facilitator at ${url}`,
    });
  } catch (error) {
    if (!isFacilitatorError(error)) throw error;
    logger.warn(
      { facilitator: url, network, reason: error.message },
      'facilitator /supported did not answer: starting anyway, /readyz reports it until it answers',
    );
  }
}
