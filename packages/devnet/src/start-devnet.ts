import { type Address, defineChain, type Hash } from 'viem';
import { anvilAccount } from './accounts';
import { freePort, resolveAnvilPath, spawnAnvil } from './anvil';
import { deployCircleToken } from './circle-token';
import { CANONICAL_USDC, MULTICALL3_ADDRESS } from './constants';
import { createClients, createDevnetWalletClient, type Devnet, type DevnetToken } from './devnet';
import { type ResolvedOptions, resolveOptions, type StartDevnetOptions } from './devnet-options';
import { DEVNET_ERROR_CODES, DevnetError } from './errors';
import {
  multicall3DeployedBytecode,
  tollboothUsdAbi,
  tollboothUsdBytecode,
  tollboothUsdDeployedBytecode,
} from './generated/artifacts';

/** Accounts 0, 1 and 2 of anvil's mnemonic; payers follow from index 3. */
const DEPLOYER_INDEX = 0;
const FACILITATOR_INDEX = 1;
const PAY_TO_INDEX = 2;
const FIRST_PAYER_INDEX = 3;

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
