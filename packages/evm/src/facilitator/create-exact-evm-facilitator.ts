import {
  type FacilitatorClient,
  type SupportedKind,
  type SupportedResponse,
  V1_NETWORKS,
  type VerifyResponse,
} from '@tollbooth/core';
import {
  type Account,
  type Address,
  type Chain,
  type Client,
  createWalletClient,
  custom,
  type Hex,
  http,
  type Transport,
  type WalletClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { checkRequest, toExactEvmRequest } from '../checks/exact-evm-request';
import { EXACT_SCHEME } from '../constants';
import { EvmErrorCode, EvmSchemeError } from '../errors';
import { settlementStateOf } from '../sending/client-state';
import { settleExactEvmPayment } from './settle-exact-evm-payment';
import { verifyExactEvmPayment } from './verify-exact-evm-payment';

/** One network the facilitator settles on. */
export interface ExactEvmFacilitatorNetwork {
  chain: Chain;
  /** JSON-RPC URL; default the chain's default RPC URL. */
  rpcUrl?: string | undefined;
  /** A viem transport, instead of `rpcUrl`. */
  transport?: Transport | undefined;
}

export interface CreateExactEvmFacilitatorParameters {
  /** A wallet client with an account and a chain. */
  walletClient?: WalletClient | undefined;
  /** The settling account (a viem account or a private key), with `chain`/`networks`. */
  account?: Account | Hex | undefined;
  /** The single network to settle on (with `rpcUrl` or `transport`). */
  chain?: Chain | undefined;
  rpcUrl?: string | undefined;
  transport?: Transport | undefined;
  /** Several networks, one client each. */
  networks?: readonly ExactEvmFacilitatorNetwork[] | undefined;
  /** Wait this long for a settlement receipt, then answer `settlement_pending`. Default 30 000. */
  receiptTimeoutMs?: number | undefined;
  /** Polling interval of the clients the facilitator creates. Default 250. */
  pollingIntervalMs?: number | undefined;
  /** Simulate the transfer in verify. Default true. */
  simulate?: boolean | undefined;
  /**
   * Simulate again in settle even when this facilitator's verify simulated the same payment less
   * than `simulationReuseMs` before. Default false: settle simulates only payments it has not
   * just verified (or when it must estimate gas, which simulates).
   */
  simulateInSettle?: boolean | undefined;
  /** How long a simulation in verify stands in for one in settle. Default 3 000. */
  simulationReuseMs?: number | undefined;
  /** Fees read from the node are reused this long. Default 1 000. */
  feeTtlMs?: number | undefined;
  /** A settlement transaction still without a receipt is broadcast again this often. Default 2 000. */
  rebroadcastAfterMs?: number | undefined;
}

/** Defaults of {@link createExactEvmFacilitator}. */
export const EXACT_EVM_FACILITATOR_DEFAULTS = Object.freeze({
  receiptTimeoutMs: 30_000,
  pollingIntervalMs: 250,
  simulate: true,
  simulateInSettle: false,
  simulationReuseMs: 3_000,
  feeTtlMs: 1_000,
  rebroadcastAfterMs: 2_000,
});

export type CreateExactEvmFacilitatorReturnType = FacilitatorClient & {
  /** The settling account's address. */
  readonly address: Address;
  /** CAIP-2 networks it settles on. */
  readonly networks: readonly string[];
};
export type CreateExactEvmFacilitatorErrorType = EvmSchemeError;

type SettlingClient = Client<Transport, Chain, Account>;

const V1_NAME_BY_NETWORK = new Map(Object.entries(V1_NETWORKS).map(([name, network]) => [network, name]));

/**
 * An in-process facilitator for scheme `exact` on EVM networks: verifies with the official checks
 * and a simulated transfer, settles with `transferWithAuthorization` from its own account (gas paid
 * by it; local nonces, broadcasts in nonce order, one receipt poller per network), x402 v2 and v1
 * payloads.
 *
 * @throws {EvmSchemeError} `invalid_config`, listing every problem at once.
 * @example
 * const facilitator = createExactEvmFacilitator({ account: privateKey, chain: base, rpcUrl: 'https://mainnet.base.org' });
 * const verdict = await facilitator.verify(payload, requirements);
 */
export function createExactEvmFacilitator(
  parameters: CreateExactEvmFacilitatorParameters,
): CreateExactEvmFacilitatorReturnType {
  const options = { ...EXACT_EVM_FACILITATOR_DEFAULTS, ...dropUndefined(parameters) };
  const problems: string[] = [];
  const clients = new Map<string, SettlingClient>();
  const { walletClient } = parameters;
  if (walletClient) {
    if (!walletClient.account) problems.push('walletClient has no account');
    if (!walletClient.chain) problems.push('walletClient has no chain');
    if (parameters.account || parameters.chain || parameters.networks)
      problems.push('give either walletClient or account with chain/networks, not both');
    if (walletClient.account && walletClient.chain) {
      const client = createWalletClient({
        account: walletClient.account,
        chain: walletClient.chain,
        transport: custom(walletClient),
        pollingInterval: walletClient.pollingInterval,
      });
      clients.set(`eip155:${walletClient.chain.id}`, client);
    }
  } else {
    let account: Account | undefined;
    if (typeof parameters.account === 'string') {
      try {
        account = privateKeyToAccount(parameters.account);
      } catch {
        problems.push('account is not a valid private key');
      }
    } else if (parameters.account && typeof parameters.account === 'object') {
      account = parameters.account;
    } else problems.push('account (or walletClient) is required');
    const networks: ExactEvmFacilitatorNetwork[] = [...(parameters.networks ?? [])];
    if (parameters.chain)
      networks.push({ chain: parameters.chain, rpcUrl: parameters.rpcUrl, transport: parameters.transport });
    else if (parameters.rpcUrl || parameters.transport) problems.push('rpcUrl/transport need a chain');
    if (networks.length === 0) problems.push('chain or networks is required');
    for (const [index, network] of networks.entries()) {
      if (!network.chain || typeof network.chain.id !== 'number') {
        problems.push(`networks[${index}].chain is not a viem chain`);
        continue;
      }
      const key = `eip155:${network.chain.id}`;
      if (clients.has(key)) problems.push(`network ${key} is configured twice`);
      if (account) {
        clients.set(
          key,
          createWalletClient({
            account,
            chain: network.chain,
            // Concurrent reads (verifications, the receipt poller's receipts) share one HTTP request.
            transport: network.transport ?? http(network.rpcUrl, { batch: { batchSize: 100, wait: 0 } }),
            pollingInterval: options.pollingIntervalMs,
          }),
        );
      }
    }
  }
  if (!Number.isInteger(options.receiptTimeoutMs) || options.receiptTimeoutMs <= 0)
    problems.push('receiptTimeoutMs must be a positive integer');
  if (!Number.isInteger(options.pollingIntervalMs) || options.pollingIntervalMs <= 0)
    problems.push('pollingIntervalMs must be a positive integer');
  if (!Number.isInteger(options.simulationReuseMs) || options.simulationReuseMs < 0)
    problems.push('simulationReuseMs must be a non-negative integer');
  if (!Number.isInteger(options.feeTtlMs) || options.feeTtlMs < 0)
    problems.push('feeTtlMs must be a non-negative integer');
  if (!Number.isInteger(options.rebroadcastAfterMs) || options.rebroadcastAfterMs <= 0)
    problems.push('rebroadcastAfterMs must be a positive integer');
  if (problems.length > 0) {
    throw new EvmSchemeError(
      EvmErrorCode.invalidOptions,
      `Invalid exact EVM facilitator options: ${problems.join('; ')}`,
      problems,
    );
  }
  // One sender per network: this facilitator's nonces, broadcasts and receipt polling there.
  for (const client of clients.values()) {
    settlementStateOf(client, {
      pollingIntervalMs: walletClient ? walletClient.pollingInterval : options.pollingIntervalMs,
      feeTtlMs: options.feeTtlMs,
      rebroadcastAfterMs: options.rebroadcastAfterMs,
    });
  }
  /** Payments whose verify simulated the transfer successfully, with when (oldest first). */
  const simulated = new Map<string, number>();
  const rememberSimulated = (key: string) => {
    const now = Date.now();
    simulated.delete(key);
    simulated.set(key, now);
    for (const [oldKey, at] of simulated) {
      if (now - at <= options.simulationReuseMs && simulated.size <= MAX_REMEMBERED_SIMULATIONS) break;
      simulated.delete(oldKey);
    }
  };
  const simulatedRecently = (key: string) => {
    const at = simulated.get(key);
    return at !== undefined && Date.now() - at <= options.simulationReuseMs;
  };
  const first = clients.values().next().value as SettlingClient;
  const address = first.account.address;
  const networks = [...clients.keys()];

  /** Answers for a payment on a network this facilitator does not serve (after the earlier checks). */
  function unserved(
    payload: Parameters<FacilitatorClient['verify']>[0],
    requirements: Parameters<FacilitatorClient['verify']>[1],
  ): VerifyResponse {
    const checked = checkRequest(toExactEvmRequest(payload, requirements));
    if (!checked.ok) {
      return {
        isValid: false,
        invalidReason: checked.reason,
        invalidMessage: checked.message,
        ...(checked.payer ? { payer: checked.payer } : {}),
      };
    }
    return {
      isValid: false,
      invalidReason: 'invalid_exact_evm_network_mismatch',
      invalidMessage: `this facilitator does not settle on ${checked.request.network}`,
      payer: checked.request.payload.authorization.from,
    };
  }

  return {
    address,
    networks,
    async verify(payload, requirements) {
      const client = clients.get(toExactEvmRequest(payload, requirements).network);
      if (!client) return unserved(payload, requirements);
      const verdict = await verifyExactEvmPayment({
        client,
        payload,
        requirements,
        simulate: options.simulate,
      });
      if (verdict.isValid && options.simulate) {
        const key = simulationKey(payload, requirements);
        if (key) rememberSimulated(key);
      }
      return verdict;
    },
    async settle(payload, requirements) {
      const request = toExactEvmRequest(payload, requirements);
      const client = clients.get(request.network);
      if (!client) {
        const verdict = unserved(payload, requirements);
        return {
          success: false,
          errorReason: verdict.invalidReason ?? 'invalid_exact_evm_network_mismatch',
          ...(verdict.invalidMessage ? { errorMessage: verdict.invalidMessage } : {}),
          ...(verdict.payer ? { payer: verdict.payer } : {}),
          transaction: '',
          network: request.wireNetwork,
        };
      }
      const key = simulationKey(payload, requirements);
      const justSimulated = key !== undefined && simulatedRecently(key);
      // One settle per verify: a second settle of the same payment simulates again.
      if (key) simulated.delete(key);
      return settleExactEvmPayment({
        client,
        payload,
        requirements,
        receiptTimeoutMs: options.receiptTimeoutMs,
        simulate: options.simulateInSettle || !justSimulated,
      });
    },
    async supported(): Promise<SupportedResponse> {
      const kinds: SupportedKind[] = [];
      for (const network of networks) kinds.push({ x402Version: 2, scheme: EXACT_SCHEME, network });
      for (const network of networks) {
        const name = V1_NAME_BY_NETWORK.get(network);
        if (name) kinds.push({ x402Version: 1, scheme: EXACT_SCHEME, network: name });
      }
      return { kinds, extensions: [], signers: { 'eip155:*': [address] } };
    },
  };
}

const MAX_REMEMBERED_SIMULATIONS = 10_000;

/** One exact payment on one requirement: the signature binds the authorization to its domain. */
function simulationKey(
  payload: Parameters<FacilitatorClient['verify']>[0],
  requirements: Parameters<FacilitatorClient['verify']>[1],
): string | undefined {
  const request = toExactEvmRequest(payload, requirements);
  const raw = request.rawPayload as
    | { signature?: unknown; authorization?: Record<string, unknown> }
    | undefined;
  if (typeof raw?.signature !== 'string' || !raw.authorization) return undefined;
  const a = raw.authorization;
  return [
    request.network,
    request.asset,
    request.payTo,
    request.amount,
    JSON.stringify(request.extra ?? null),
    a['from'],
    a['to'],
    a['value'],
    a['validAfter'],
    a['validBefore'],
    a['nonce'],
    raw.signature,
  ].join('|');
}

function dropUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
