import type { ReconcileInput, SchemeServer } from '@tollbooth/core';
import {
  type Chain,
  type Client,
  createPublicClient,
  erc20Abi,
  getAddress,
  http,
  isAddress,
  type Transport,
} from 'viem';
import { getBlockNumber, getChainId as readChainId, readContract } from 'viem/actions';
import { defineAsset, type EvmAsset } from '../assets/define-asset';
import { EXACT_SCHEME } from '../constants';
import { EvmErrorCode, EvmSchemeError } from '../errors';
import { reconcileExactEvmPayment } from '../reconcile/reconcile-exact-evm-payment';
import { verifySignIn } from '../sign-in/verify-sign-in';
import type { RecoveryBackend } from '../signature/recovery-backends';
import { checkEvmAddress } from '../utils/check-evm-address';
import { getChainId } from '../utils/get-chain-id';
import { checkExactEvmPaymentOnChain } from './check-exact-evm-payment-on-chain';
import { preVerifyExactEvmPayment } from './pre-verify-exact-evm-payment';
import { resolveExactEvmPrice } from './resolve-exact-evm-price';

type AnyClient = Client<Transport, Chain | undefined>;

export interface CreateExactEvmSchemeParameters {
  /** Extra assets (custom chains, devnet tokens), searched before the Base and Base Sepolia USDC defaults. */
  assets?: readonly EvmAsset[] | undefined;
  /**
   * Chain access for reconciling uncertain settlements: one viem client (used for the network of
   * its `chain`, or for every network when it has none) or a client per CAIP-2 network. Without it
   * the scheme has no `reconcile`.
   */
  publicClient?: AnyClient | Readonly<Record<string, AnyClient>> | undefined;
  /**
   * The same chain access from JSON-RPC URLs, when you have no viem client at hand: one URL (it
   * serves the network whose chain id its node reports) or a URL per CAIP-2 network. Every node's
   * `eth_chainId` is checked before it judges a payment: a node of another chain is never asked.
   * Networks listed in `publicClient` take precedence.
   * @example createExactEvmScheme({ rpcUrl: { 'eip155:8453': process.env.RPC_URL! } })
   */
  rpcUrl?: string | Readonly<Record<string, string>> | undefined;
  /** Blocks searched backwards for a used authorization's logs. Default 50 000. */
  reconcileLookbackBlocks?: bigint | number | undefined;
  /**
   * Blocks the chain must have mined at or past an authorization's `validBefore` before an unused
   * one counts as expired (judged by the chain's time, never the server's clock). Default 5.
   */
  expiryGraceBlocks?: bigint | number | undefined;
  /** Force the signature recovery backend. Default: native libsecp256k1 when it loads, else @noble/curves. */
  recoveryBackend?: RecoveryBackend | undefined;
  /**
   * Leave 65-byte signatures that do not recover to the payer to the facilitator (ERC-1271 wallets
   * that sign with an owner key) instead of refusing them locally. Default false.
   */
  deferMismatchedSignaturesToFacilitator?: boolean | undefined;
}
export type CreateExactEvmSchemeReturnType = SchemeServer;
export type CreateExactEvmSchemeErrorType = EvmSchemeError;

function isHttpUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  try {
    const protocol = new URL(value).protocol;
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

/** A client built from a URL, answering only once its node said which chain it serves. */
interface CheckedReader {
  client: AnyClient;
  /** The chain id the node reports (asked once; asked again after a failure). */
  chainId(): Promise<number>;
  /** The URL without credentials or query, for messages. */
  label: string;
}

function checkedReader(url: string): CheckedReader {
  const client = createPublicClient({ transport: http(url, { retryCount: 1 }) }) as AnyClient;
  let asked: Promise<number> | undefined;
  const parsed = new URL(url);
  return {
    client,
    label: `${parsed.protocol}//${parsed.host}`,
    chainId() {
      asked ??= readChainId(client).catch((error: unknown) => {
        asked = undefined;
        throw error;
      });
      return asked;
    },
  };
}

function isClient(value: unknown): value is AnyClient {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { request?: unknown }).request === 'function'
  );
}

/**
 * The server side of scheme `exact` on `eip155:*` networks (EIP-3009 tokens such as USDC), for
 * `@tollbooth/core`'s gate: resolves prices, pre-verifies payments locally and reconciles
 * uncertain settlements on chain.
 *
 * @throws {EvmSchemeError} `invalid_config`, listing every problem at once.
 * @example
 * const scheme = createExactEvmScheme({ publicClient: createPublicClient({ chain: base, transport: http() }) });
 * scheme.resolvePrice('$0.01', 'eip155:8453'); // { amount: '10000', asset: '0x8335…', extra: { name: 'USD Coin', version: '2' } }
 */
export function createExactEvmScheme(
  parameters: CreateExactEvmSchemeParameters = {},
): CreateExactEvmSchemeReturnType {
  const problems: string[] = [];
  const assets: EvmAsset[] = [];
  for (const [index, asset] of (parameters.assets ?? []).entries()) {
    try {
      assets.push(defineAsset(asset));
    } catch (error) {
      problems.push(
        `assets[${index}]: ${error instanceof EvmSchemeError ? error.problems.join('; ') : String(error)}`,
      );
    }
  }
  const { publicClient, recoveryBackend } = parameters;
  const clients = new Map<string, AnyClient>();
  let anyNetworkClient: AnyClient | undefined;
  if (publicClient !== undefined) {
    if (isClient(publicClient)) {
      if (publicClient.chain) clients.set(`eip155:${publicClient.chain.id}`, publicClient);
      else anyNetworkClient = publicClient;
    } else if (typeof publicClient === 'object' && publicClient !== null) {
      for (const [network, client] of Object.entries(publicClient)) {
        if (getChainId(network) === undefined)
          problems.push(`publicClient: "${network}" is not an eip155 network`);
        else if (!isClient(client)) problems.push(`publicClient["${network}"] is not a viem client`);
        else clients.set(network, client);
      }
    } else problems.push('publicClient must be a viem client or a record of clients by network');
  }
  const urlReaders = new Map<string, CheckedReader>();
  let anyNetworkReader: CheckedReader | undefined;
  const { rpcUrl } = parameters;
  if (rpcUrl !== undefined) {
    if (typeof rpcUrl === 'string') {
      if (isHttpUrl(rpcUrl)) anyNetworkReader = checkedReader(rpcUrl);
      else problems.push('rpcUrl must be an http(s) URL');
    } else if (typeof rpcUrl === 'object' && rpcUrl !== null) {
      for (const [network, url] of Object.entries(rpcUrl)) {
        if (getChainId(network) === undefined) problems.push(`rpcUrl: "${network}" is not an eip155 network`);
        else if (!isHttpUrl(url)) problems.push(`rpcUrl["${network}"] must be an http(s) URL`);
        else if (!clients.has(network)) urlReaders.set(network, checkedReader(url));
      }
    } else problems.push('rpcUrl must be a URL or a record of URLs by network');
  }
  const lookback = parameters.reconcileLookbackBlocks;
  const validLookback =
    lookback === undefined ||
    (typeof lookback === 'bigint' ? lookback >= 0n : Number.isSafeInteger(lookback) && lookback >= 0);
  if (!validLookback) problems.push('reconcileLookbackBlocks must be a non-negative integer');
  const grace = parameters.expiryGraceBlocks;
  const validGrace =
    grace === undefined ||
    (typeof grace === 'bigint' ? grace >= 0n : Number.isSafeInteger(grace) && grace >= 0);
  if (!validGrace) problems.push('expiryGraceBlocks must be a non-negative integer');
  if (recoveryBackend !== undefined && recoveryBackend !== 'native' && recoveryBackend !== 'noble')
    problems.push(`recoveryBackend must be "native" or "noble", got "${String(recoveryBackend)}"`);
  if (problems.length > 0) {
    throw new EvmSchemeError(
      EvmErrorCode.invalidOptions,
      `Invalid exact EVM scheme options: ${problems.join('; ')}`,
      problems,
    );
  }

  const scheme: SchemeServer = {
    scheme: EXACT_SCHEME,
    supportsNetwork: (network) => network === 'eip155:*' || getChainId(network) !== undefined,
    checkAddress: (address) => checkEvmAddress({ address }),
    resolvePrice: (price, network) => resolveExactEvmPrice({ price, network, assets }),
    signIn: {
      signatureType: (network) => (getChainId(network) === undefined ? undefined : 'eip191'),
      canonicalAddress: (address) =>
        isAddress(address, { strict: false }) ? getAddress(address) : undefined,
      verify: (proof) => verifySignIn({ proof }),
    },
    preVerify: (payload, requirements, now) =>
      preVerifyExactEvmPayment({
        payload,
        requirements,
        now,
        backend: recoveryBackend,
        deferMismatchedSignaturesToFacilitator: parameters.deferMismatchedSignaturesToFacilitator === true,
      }),
  };
  if (clients.size > 0 || anyNetworkClient || urlReaders.size > 0 || anyNetworkReader) {
    /** The client that may judge a payment on `network`, or why there is none. */
    const readerFor = async (network: string): Promise<{ client: AnyClient } | { message: string }> => {
      const client = clients.get(network);
      if (client) return { client };
      const reader = urlReaders.get(network) ?? (anyNetworkClient ? undefined : anyNetworkReader);
      if (!reader) {
        return anyNetworkClient
          ? { client: anyNetworkClient }
          : { message: `no client configured for ${network}` };
      }
      let served: number;
      try {
        served = await reader.chainId();
      } catch (error) {
        return {
          message: `chain reader ${reader.label} did not answer eth_chainId: ${error instanceof Error ? error.message : String(error)}`,
        };
      }
      if (`eip155:${served}` !== network)
        return { message: `chain reader ${reader.label} serves eip155:${served}, not ${network}` };
      return { client: reader.client };
    };
    scheme.hasChainReader = (network: string) =>
      clients.has(network) ||
      urlReaders.has(network) ||
      anyNetworkClient !== undefined ||
      anyNetworkReader !== undefined;
    scheme.chainStatus = async (network: string) => {
      const reader = await readerFor(network);
      if ('message' in reader) return { ok: false, message: reader.message };
      try {
        return { ok: true, blockNumber: await getBlockNumber(reader.client, { cacheTime: 0 }) };
      } catch (error) {
        return { ok: false, message: error instanceof Error ? error.message : String(error) };
      }
    };
    scheme.reconcile = async (input: ReconcileInput) => {
      const reader = await readerFor(input.requirements.network);
      if ('message' in reader) return { status: 'unknown', message: reader.message };
      return reconcileExactEvmPayment({
        client: reader.client,
        payload: input.payload,
        requirements: input.requirements,
        transaction: input.transaction,
        lookbackBlocks: lookback === undefined ? undefined : BigInt(lookback),
        expiryGraceBlocks: grace === undefined ? undefined : BigInt(grace),
      });
    };
    // With a chain reader, a sign-in is checked as the chain sees it: EIP-1271 and EIP-6492 wallets.
    scheme.signIn = {
      ...scheme.signIn!,
      verify: async (proof) => {
        const reader = await readerFor(proof.chainId);
        if ('message' in reader) throw new Error(reader.message);
        return verifySignIn({ proof, client: reader.client });
      },
    };
    // The same question with the reported hash: its receipt shows the transfer, or the chain
    // shows the authorization used by another transaction, unused (a hash that never mines), or
    // still pending.
    scheme.confirmSettlement = scheme.reconcile;
    // Local verify (a route that settles after its handler skips /verify): balance and
    // authorization state in one read.
    scheme.checkOnChain = async (input) => {
      const reader = await readerFor(input.requirements.network);
      if ('message' in reader) return { status: 'unknown', message: reader.message };
      return checkExactEvmPaymentOnChain({ ...input, client: reader.client });
    };
    scheme.balanceOf = async ({ network, asset, owner }) => {
      const reader = await readerFor(network);
      if ('message' in reader) throw new Error(reader.message);
      return readContract(reader.client, {
        address: asset as `0x${string}`,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [owner as `0x${string}`],
        blockTag: 'latest',
      });
    };
  }
  return scheme;
}
