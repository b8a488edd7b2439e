import { createHttpFacilitatorClient, type FacilitatorClient, type SchemeServer } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { createExactEvmFacilitator, createExactEvmScheme } from '@tollbooth/evm';
import { startFacilitatorServer } from '@tollbooth/facilitator';
import type { Logger } from 'pino';
import type { PaymentTerms } from '../capabilities/payment-terms';
import type { ServiceConfig } from '../config';
import type { CleanupStack } from './cleanup';

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
      const started = await startDevnet({ chainId: chainIdOf(config.payment.network) });
      devnet = started;
      cleanups.push('devnet', () => started.stop());
      logger.info({ rpcUrl: started.rpcUrl, token: started.token.address }, 'devnet started');
    }
    const inProcess = createExactEvmFacilitator({
      account: devnet.accounts.facilitator.privateKey,
      chain: devnet.chain,
      rpcUrl: devnet.rpcUrl,
    });
    const served = await startFacilitatorServer({ facilitator: inProcess });
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
  });
  const terms: PaymentTerms = {
    network: config.payment.network,
    payTo: config.payment.payTo ?? devnet!.accounts.payTo.address,
    asset: config.payment.asset,
    assetName: config.payment.assetName,
    assetVersion: config.payment.assetVersion,
  };
  const schemes = [createExactEvmScheme(devnet ? { publicClient: devnet.publicClient } : {})];
  return { devnet, facilitatorUrl, facilitator, terms, schemes };
}
