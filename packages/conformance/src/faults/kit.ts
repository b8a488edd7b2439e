// What a server under fault audits talks to: the devnet, an honest facilitator settling on it
// (Tollbooth's in-process one served over HTTP, or the vendor's own), and the fault proxy in front.
import type { DevnetTokenKind } from '@tollbooth/devnet';
import { createExactEvmFacilitator } from '@tollbooth/evm';
import {
  type FacilitatorFaultProxy,
  type RunningFacilitatorServer,
  startFacilitatorFaultProxy,
  startFacilitatorServer,
} from '@tollbooth/facilitator';
import type { AuditChainConfig } from '../facilitator/chain';
import { type AuditDevnet, startAuditDevnet } from '../facilitator/devnet';

export interface StartFaultKitOptions {
  /** RPC port of the devnet on 127.0.0.1. Default: a free one. */
  devnetPort?: number;
  chainId?: number;
  token?: DevnetTokenKind;
  /** Port of the fault proxy (the server's facilitator URL). Default: a free one. */
  proxyPort?: number;
  /** A facilitator of your own on the devnet behind the proxy. Default: Tollbooth's. */
  facilitatorUrl?: string;
  /** How long `slow-supported` delays `/supported`. Default 3 000 ms. */
  slowSupportedMs?: number;
}

export interface FaultKit {
  readonly devnet: AuditDevnet;
  /** The chain and the kit's payer. */
  readonly chain: AuditChainConfig;
  /** Give this to the server as its facilitator URL. */
  readonly facilitatorUrl: string;
  readonly proxy: FacilitatorFaultProxy;
  stop(): Promise<void>;
}

/**
 * Starts the devnet, an honest facilitator and the fault proxy.
 * @example
 * const kit = await startFaultKit();
 * // start the server with facilitator URL kit.facilitatorUrl, chain RPC kit.chain.rpcUrl
 * const results = await runFaultAudits({ url, paidPath }, { chain: kit.chain, faults: kit.proxy });
 */
export async function startFaultKit(options: StartFaultKitOptions = {}): Promise<FaultKit> {
  const devnet = await startAuditDevnet({
    ...(options.devnetPort === undefined ? {} : { port: options.devnetPort }),
    ...(options.chainId === undefined ? {} : { chainId: options.chainId }),
    ...(options.token === undefined ? {} : { token: options.token }),
  });
  let honest: RunningFacilitatorServer | undefined;
  try {
    if (!options.facilitatorUrl) {
      honest = await startFacilitatorServer({
        facilitator: createExactEvmFacilitator({
          ...devnet.devnet.facilitatorOptions,
          pollingIntervalMs: 100,
        }),
      });
    }
    const proxy = await startFacilitatorFaultProxy({
      target: options.facilitatorUrl ?? honest!.url,
      slowSupportedMs: options.slowSupportedMs ?? 3_000,
      ...(options.proxyPort === undefined ? {} : { port: options.proxyPort }),
    });
    return {
      devnet,
      chain: devnet.chain,
      facilitatorUrl: proxy.url,
      proxy,
      async stop() {
        await proxy.close();
        await honest?.close();
        await devnet.stop();
      },
    };
  } catch (error) {
    await honest?.close();
    await devnet.stop();
    throw error;
  }
}
