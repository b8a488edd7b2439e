import {
  type Address,
  type Chain,
  type Client,
  createPublicClient,
  createTestClient,
  createWalletClient,
  type Hash,
  type Hex,
  type HttpTransport,
  http,
  type PrivateKeyAccount,
  type PublicActions,
  type PublicClient,
  publicActions,
  type TestClient,
  type WalletActions,
  type WalletRpcSchema,
} from 'viem';
import { nonceManager, privateKeyToAccount } from 'viem/accounts';
import type { DevnetAccount } from './accounts';
import type { DevnetTokenKind } from './devnet-options';
import type { tollboothUsdAbi } from './generated/artifacts';

/** The token a devnet runs. */
export interface DevnetToken {
  readonly kind: DevnetTokenKind;
  readonly address: Address;
  /** ERC-20 name, equal to the EIP-712 domain name. */
  readonly name: string;
  /** EIP-712 domain version. */
  readonly version: string;
  readonly symbol: string;
  readonly decimals: 6;
  /** ABI of TollboothUSD; Circle's FiatTokenV2_2 has the same EIP-3009 / ERC-20 functions and events. */
  readonly abi: typeof tollboothUsdAbi;
}

/** A wallet client for one local account, with the public actions (read, wait) mixed in. */
export type DevnetWalletClient = Client<
  HttpTransport,
  Chain,
  PrivateKeyAccount,
  WalletRpcSchema,
  WalletActions<Chain, PrivateKeyAccount> & PublicActions<HttpTransport, Chain, PrivateKeyAccount>
>;

/** The devnet's public client. */
export type DevnetPublicClient = PublicClient<HttpTransport, Chain>;

/** The devnet's viem test client (mode anvil). */
export type DevnetTestClient = TestClient<'anvil', HttpTransport, Chain>;

/** A wallet client for `privateKey` on the devnet, viem's nonce manager on or off. */
export function createDevnetWalletClient(
  chain: Chain,
  rpcUrl: string,
  privateKey: Hex,
  useNonceManager: boolean,
): DevnetWalletClient {
  const account = privateKeyToAccount(privateKey, useNonceManager ? { nonceManager } : {});
  return createWalletClient({ account, chain, transport: http(rpcUrl) }).extend(publicActions);
}

/** The devnet's public and test clients. */
export function createClients(
  chain: Chain,
  rpcUrl: string,
): { publicClient: DevnetPublicClient; testClient: DevnetTestClient } {
  return {
    publicClient: createPublicClient({ chain, transport: http(rpcUrl) }),
    testClient: createTestClient({ chain, mode: 'anvil', transport: http(rpcUrl) }),
  };
}

/** A running local chain with a funded EIP-3009 token. */
export interface Devnet {
  readonly rpcUrl: string;
  readonly chainId: number;
  /** viem chain for {@link rpcUrl}, with Multicall3 registered. */
  readonly chain: Chain;
  readonly token: DevnetToken;
  readonly multicall3: Address;
  /** Local test accounts from anvil's public mnemonic; each holds 10,000 ETH for gas. */
  readonly accounts: {
    /** Deployed the token; owner and minter. */
    readonly deployer: DevnetAccount;
    /** Meant to submit settlements. */
    readonly facilitator: DevnetAccount;
    /** Meant to receive payments (holds no token at start). */
    readonly payTo: DevnetAccount;
    /** Hold `payerBalance` of the token each. */
    readonly payers: readonly DevnetAccount[];
  };
  /**
   * What a facilitator needs to settle here from the `facilitator` account, e.g.
   * `createExactEvmFacilitator(devnet.facilitatorOptions)` from `@tollbooth/evm`.
   */
  readonly facilitatorOptions: { readonly account: Hex; readonly chain: Chain; readonly rpcUrl: string };
  readonly publicClient: DevnetPublicClient;
  /** viem test client (mode anvil): snapshots, impersonation, setCode and the like. */
  readonly testClient: DevnetTestClient;
  /**
   * A wallet client (with public actions) for a private key. viem's nonce manager is on by default,
   * so concurrent transactions from one account do not collide.
   */
  clientFor(privateKey: Hex, options?: { nonceManager?: boolean }): DevnetWalletClient;
  /** Token balance of an address, in atomic units. */
  balanceOf(address: Address): Promise<bigint>;
  /** Mints tokens to an address (from the deployer). Resolves with the transaction hash once mined. */
  mint(to: Address, amount: bigint): Promise<Hash>;
  /** Mines `blocks` blocks (default 1). */
  mine(blocks?: number): Promise<void>;
  /** Turns automine on or off. */
  setAutomine(on: boolean): Promise<void>;
  /** Timestamp (seconds) of the next block. */
  setNextBlockTimestamp(timestamp: bigint | number): Promise<void>;
  /** Moves chain time forward by `seconds` (applies to the next block). */
  increaseTime(seconds: number): Promise<void>;
  /** Timestamp (seconds) of the latest block. */
  latestTimestamp(): Promise<bigint>;
  /** Stops anvil and waits for it to exit. Idempotent. */
  stop(): Promise<void>;
}
