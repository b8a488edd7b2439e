import type { OnChainCheck, OnChainCheckInput } from '@tollbooth/core';
import { type Address, type Chain, type Client, domainSeparator, type Hex, type Transport } from 'viem';
import { multicall, readContract } from 'viem/actions';
import { isTransportError } from '../checks/chain-checks';
import { ExactEvmReason, eip3009Abi } from '../constants';
import { parseExactEvmPayloadFast } from '../payload/exact-evm-payload';
import { getChainId } from '../utils/get-chain-id';

type AnyClient = Client<Transport, Chain | undefined>;

/** Where Multicall3 lives on every chain that has it (the devnet installs it there too). */
export const MULTICALL3_ADDRESS: Address = '0xcA11bde05977b3631167028862bE2a173976CA11';

/** Clients whose chain has no working Multicall3: asked with two calls at once instead. */
const withoutMulticall = new WeakSet<object>();

const domainSeparatorAbi = [
  {
    type: 'function',
    name: 'DOMAIN_SEPARATOR',
    stateMutability: 'view',
    inputs: [],
    outputs: [{ name: '', type: 'bytes32' }],
  },
] as const;

/**
 * Each token's `DOMAIN_SEPARATOR()` as read once per client (lower-case asset → separator): a
 * token's domain does not change between payments, so it rides along with the first read only.
 */
const tokenSeparators = new WeakMap<object, Map<string, Hex>>();
const MAX_TOKENS_PER_CLIENT = 256;

export interface CheckExactEvmPaymentOnChainParameters extends OnChainCheckInput {
  client: AnyClient;
}

/**
 * What a facilitator's `/verify` reads from the chain beyond the local pre-verification, in one
 * `eth_call` (Multicall3 `aggregate3` at its canonical address): the payer's token balance,
 * `authorizationState(from, nonce)` and, the first time a token is asked, its `DOMAIN_SEPARATOR()`.
 * A chain without Multicall3 there is asked with separate `eth_call`s at once (and remembered).
 *
 * Only an answer the chain cannot take back refuses here: an authorization already used. Anything
 * else short of `valid` is `unknown`, and the gate asks the facilitator's `/verify`:
 * - a balance below the amount — our node may lag the facilitator's (a payer funded a block ago),
 *   so our read alone never refuses a payer;
 * - a route whose EIP-712 name or version is not the token's domain — the signature recovered
 *   here was checked against the route's domain, which the token would refuse at settle (the
 *   facilitator's simulation catches it; local verify would have run the handler for nothing);
 * - a token without a readable `DOMAIN_SEPARATOR()`, and a read that fails.
 * Never throws.
 */
export async function checkExactEvmPaymentOnChain(
  parameters: CheckExactEvmPaymentOnChainParameters,
): Promise<OnChainCheck> {
  const { client, requirements } = parameters;
  const parsed = parseExactEvmPayloadFast(parameters.payload.payload);
  if (!parsed) return { status: 'unknown', message: 'the payload is not a plain exact EVM payload' };
  const expected = expectedSeparator(requirements);
  if (!expected)
    return { status: 'unknown', message: 'the requirement names no EIP-712 domain of an EVM chain' };
  const { from, nonce, value } = parsed.authorization;
  const asset = requirements.asset as Address;
  let read: { balance: bigint; used: boolean; separator: Hex | undefined };
  try {
    read = await readBalanceAndState(client, asset, from, nonce);
  } catch (error) {
    return {
      status: 'unknown',
      message: `reading ${asset} balance and authorization state failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
    };
  }
  if (read.used)
    return {
      status: 'invalid',
      reason: ExactEvmReason.nonceAlreadyUsed,
      message: `nonce ${nonce} of ${from} is already used`,
    };
  if (read.separator === undefined)
    return { status: 'unknown', message: `${asset} has no readable DOMAIN_SEPARATOR()` };
  if (read.separator.toLowerCase() !== expected)
    return {
      status: 'unknown',
      message: `the route's EIP-712 domain (name ${String(requirements.extra?.['name'])}, version ${String(requirements.extra?.['version'])}) is not ${asset}'s DOMAIN_SEPARATOR()`,
    };
  if (read.balance < BigInt(value))
    return {
      status: 'unknown',
      message: `balance ${read.balance} read below ${value}; the facilitator decides`,
    };
  return { status: 'valid' };
}

/** The separator the route's domain gives (lower-case hex), or `undefined` without one. */
function expectedSeparator(
  requirements: CheckExactEvmPaymentOnChainParameters['requirements'],
): string | undefined {
  const name = requirements.extra?.['name'];
  const version = requirements.extra?.['version'];
  const chainId = getChainId(requirements.network);
  if (typeof name !== 'string' || typeof version !== 'string' || chainId === undefined) return undefined;
  try {
    return domainSeparator({
      domain: { name, version, chainId, verifyingContract: requirements.asset as Address },
    }).toLowerCase();
  } catch {
    return undefined;
  }
}

function knownSeparator(client: AnyClient, asset: Address): Hex | undefined {
  return tokenSeparators.get(client)?.get(asset.toLowerCase());
}

function rememberSeparator(client: AnyClient, asset: Address, separator: Hex): void {
  let known = tokenSeparators.get(client);
  if (!known) {
    known = new Map();
    tokenSeparators.set(client, known);
  }
  if (known.size >= MAX_TOKENS_PER_CLIENT) known.clear();
  known.set(asset.toLowerCase(), separator);
}

async function readBalanceAndState(
  client: AnyClient,
  asset: Address,
  from: Address,
  nonce: Hex,
): Promise<{ balance: bigint; used: boolean; separator: Hex | undefined }> {
  const balanceCall = { address: asset, abi: eip3009Abi, functionName: 'balanceOf', args: [from] } as const;
  const stateCall = {
    address: asset,
    abi: eip3009Abi,
    functionName: 'authorizationState',
    args: [from, nonce],
  } as const;
  const separatorCall = {
    address: asset,
    abi: domainSeparatorAbi,
    functionName: 'DOMAIN_SEPARATOR',
  } as const;
  const known = knownSeparator(client, asset);
  if (!withoutMulticall.has(client)) {
    try {
      // allowFailure: a token without DOMAIN_SEPARATOR() fails that call alone, not the read.
      const [balance, used, separator] = await multicall(client, {
        contracts: known ? [balanceCall, stateCall] : [balanceCall, stateCall, separatorCall],
        multicallAddress: MULTICALL3_ADDRESS,
        allowFailure: true,
        blockTag: 'latest',
      });
      if (balance.status === 'success' && used.status === 'success') {
        const read = known ?? (separator?.status === 'success' ? (separator.result as Hex) : undefined);
        if (read && !known) rememberSeparator(client, asset, read);
        return { balance: balance.result, used: used.result, separator: read };
      }
    } catch (error) {
      if (isTransportError(error)) throw error;
      // No Multicall3 at its address: the calls alone tell whether the token answers.
    }
  }
  const [balance, used, separator] = await Promise.all([
    readContract(client, { ...balanceCall, blockTag: 'latest' }),
    readContract(client, { ...stateCall, blockTag: 'latest' }),
    known ??
      readContract(client, { ...separatorCall, blockTag: 'latest' }).catch((error: unknown) => {
        if (isTransportError(error)) throw error;
        return undefined;
      }),
  ]);
  withoutMulticall.add(client);
  if (separator && !known) rememberSeparator(client, asset, separator);
  return { balance, used, separator };
}
