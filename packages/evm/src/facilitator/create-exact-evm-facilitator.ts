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
  createNonceManager,
  createWalletClient,
  custom,
  type Hex,
  http,
  type NonceManager,
  type Transport,
  type WalletClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { jsonRpc } from 'viem/nonce';
import { EXACT_SCHEME } from '../constants';
import { EvmErrorCode, EvmSchemeError } from '../errors';
import { checkRequest, toExactEvmRequest } from '../internal/exact-evm-request';
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
  /** A wallet client with an account and a chain; its account gets a nonce manager if it has none. */
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
  /** Simulate again in settle. Default false. */
  simulateInSettle?: boolean | undefined;
}

/** Defaults of {@link createExactEvmFacilitator}. */
export const EXACT_EVM_FACILITATOR_DEFAULTS = Object.freeze({
  receiptTimeoutMs: 30_000,
  pollingIntervalMs: 250,
  simulate: true,
  simulateInSettle: false,
});

export type CreateExactEvmFacilitatorReturnType = FacilitatorClient & {
  /** The settling account's address. */
  readonly address: Address;
  /** CAIP-2 networks it settles on. */
  readonly networks: readonly string[];
};
export type CreateExactEvmFacilitatorErrorType = EvmSchemeError;

type SettlingClient = Client<Transport, Chain, Account>;

/**
 * Concurrent settlements from one account otherwise reuse the same transaction nonce. Each
 * facilitator gets a nonce manager of its own rather than viem's process-wide one, so two
 * facilitators (or chains that share an id, like two devnets) never inherit each other's counts.
 */
function withNonceManager(account: Account, manager: NonceManager): Account {
  return account.nonceManager ? account : ({ ...account, nonceManager: manager } as Account);
}

const V1_NAME_BY_NETWORK = new Map(Object.entries(V1_NETWORKS).map(([name, network]) => [network, name]));

/**
 * An in-process facilitator for scheme `exact` on EVM networks: verifies with the official checks
 * and a simulated transfer, settles with `transferWithAuthorization` from its own account (gas paid
 * by it, a nonce manager for concurrent settlements), x402 v2 and v1 payloads.
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
  const ownNonceManager = createNonceManager({ source: jsonRpc() });
  const { walletClient } = parameters;
  if (walletClient) {
    if (!walletClient.account) problems.push('walletClient has no account');
    if (!walletClient.chain) problems.push('walletClient has no chain');
    if (parameters.account || parameters.chain || parameters.networks)
      problems.push('give either walletClient or account with chain/networks, not both');
    if (walletClient.account && walletClient.chain) {
      const client = createWalletClient({
        account: withNonceManager(walletClient.account, ownNonceManager),
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
        account = privateKeyToAccount(parameters.account, { nonceManager: ownNonceManager });
      } catch {
        problems.push('account is not a valid private key');
      }
    } else if (parameters.account && typeof parameters.account === 'object') {
      account = withNonceManager(parameters.account, ownNonceManager);
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
            transport: network.transport ?? http(network.rpcUrl),
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
  if (problems.length > 0) {
    throw new EvmSchemeError(
      EvmErrorCode.invalidOptions,
      `Invalid exact EVM facilitator options: ${problems.join('; ')}`,
      problems,
    );
  }
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
      return verifyExactEvmPayment({ client, payload, requirements, simulate: options.simulate });
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
      const receipt = await settleExactEvmPayment({
        client,
        payload,
        requirements,
        receiptTimeoutMs: options.receiptTimeoutMs,
        simulate: options.simulateInSettle,
      });
      if (receipt.errorReason === 'settlement_pending') {
        // The transaction may never be mined (dropped, replaced): count nonces from the node's
        // pending view again, or every later settlement would queue behind a gap.
        client.account.nonceManager?.reset({ address: client.account.address, chainId: client.chain.id });
      }
      return receipt;
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

function dropUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
