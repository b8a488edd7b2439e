// The chain a facilitator vendor audits against when they bring none: the devnet (anvil with an
// EIP-3009 token at the canonical USDC address), its payers funded, gas for any settling account.
import { type Devnet, type DevnetTokenKind, startDevnet } from '@tollbooth/devnet';
import { type Address, type Hex, parseEther } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { AuditChainConfig } from './chain';

export interface StartAuditDevnetOptions {
  /** RPC port on 127.0.0.1 (fixed, so a facilitator can be configured before the run). Default: a free one. */
  port?: number;
  /** Default 8453 (Base), so the token sits at the real USDC address with its EIP-712 domain. */
  chainId?: number;
  /** `tollbooth` (TollboothUSD) or `circle` (Circle's FiatTokenV2_2). Default `tollbooth`. */
  token?: DevnetTokenKind;
}

export interface AuditDevnet {
  readonly devnet: Devnet;
  /** What `runFacilitatorAudits` needs: payers, payTo, a submitter with gas. */
  readonly chain: AuditChainConfig;
  /** A public anvil test key with gas, for a facilitator to settle from. */
  readonly settlerKey: Hex;
  /** Gives each address 1,000 ETH of gas (the signers a facilitator lists). */
  fund(addresses: readonly string[]): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts a devnet for facilitator audits.
 * @example
 * const { chain, stop } = await startAuditDevnet({ port: 8545 });
 * // point the facilitator at chain.rpcUrl, then runFacilitatorAudits({ url }, { chain })
 */
export async function startAuditDevnet(options: StartAuditDevnetOptions = {}): Promise<AuditDevnet> {
  const devnet = await startDevnet({
    chainId: options.chainId ?? 8453,
    token: options.token ?? 'tollbooth',
    payers: 2,
    ...(options.port === undefined ? {} : { port: options.port }),
  });
  // The audits' own transactions come from a key no facilitator can be using.
  const submitter = generatePrivateKey();
  const fund = async (addresses: readonly string[]) => {
    for (const address of addresses) {
      if (!/^0x[0-9a-fA-F]{40}$/.test(address)) continue;
      await devnet.testClient.setBalance({ address: address as Address, value: parseEther('1000') });
    }
  };
  await fund([privateKeyToAccount(submitter).address]);
  return {
    devnet,
    settlerKey: devnet.accounts.facilitator.privateKey,
    chain: {
      rpcUrl: devnet.rpcUrl,
      chainId: devnet.chainId,
      token: { address: devnet.token.address, name: devnet.token.name, version: devnet.token.version },
      payers: devnet.accounts.payers.map((p) => p.privateKey),
      payTo: devnet.accounts.payTo.address,
      submitter,
    },
    fund,
    stop: () => devnet.stop(),
  };
}
