import type { ReconcileInput, SchemeServer } from '@tollbooth/core';
import type { Chain, Client, Transport } from 'viem';
import { getBlockNumber } from 'viem/actions';
import { defineAsset, type EvmAsset } from '../assets/define-asset';
import { EXACT_SCHEME } from '../constants';
import { EvmErrorCode, EvmSchemeError } from '../errors';
import { reconcileExactEvmPayment } from '../reconcile/reconcile-exact-evm-payment';
import type { RecoveryBackend } from '../signature/recovery-backends';
import { checkEvmAddress } from '../utils/check-evm-address';
import { getChainId } from '../utils/get-chain-id';
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
  /** Blocks searched backwards for a used authorization's logs. Default 50 000. */
  reconcileLookbackBlocks?: bigint | number | undefined;
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
  const lookback = parameters.reconcileLookbackBlocks;
  const validLookback =
    lookback === undefined ||
    (typeof lookback === 'bigint' ? lookback >= 0n : Number.isSafeInteger(lookback) && lookback >= 0);
  if (!validLookback) problems.push('reconcileLookbackBlocks must be a non-negative integer');
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
    preVerify: (payload, requirements, now) =>
      preVerifyExactEvmPayment({
        payload,
        requirements,
        now,
        backend: recoveryBackend,
        deferMismatchedSignaturesToFacilitator: parameters.deferMismatchedSignaturesToFacilitator === true,
      }),
  };
  if (clients.size > 0 || anyNetworkClient) {
    scheme.chainStatus = async (network: string) => {
      const client = clients.get(network) ?? anyNetworkClient;
      if (!client) return { ok: false, message: `no client configured for ${network}` };
      try {
        return { ok: true, blockNumber: await getBlockNumber(client, { cacheTime: 0 }) };
      } catch (error) {
        return { ok: false, message: error instanceof Error ? error.message : String(error) };
      }
    };
    scheme.reconcile = async (input: ReconcileInput) => {
      const client = clients.get(input.requirements.network) ?? anyNetworkClient;
      if (!client)
        return { status: 'unknown', message: `no client configured for ${input.requirements.network}` };
      return reconcileExactEvmPayment({
        client,
        payload: input.payload,
        requirements: input.requirements,
        transaction: input.transaction,
        now: input.now,
        lookbackBlocks: lookback === undefined ? undefined : BigInt(lookback),
      });
    };
    // The same question with the reported hash: its receipt shows the transfer, or the chain
    // shows the authorization used by another transaction, unused (a hash that never mines), or
    // still pending.
    scheme.confirmSettlement = scheme.reconcile;
  }
  return scheme;
}
