import type { OnChainCheck, OnChainCheckInput } from '@tollbooth/core';
import type { Address, Chain, Client, Hex, Transport } from 'viem';
import { multicall, readContract } from 'viem/actions';
import { isTransportError } from '../checks/chain-checks';
import { ExactEvmReason, eip3009Abi } from '../constants';
import { parseExactEvmPayloadFast } from '../payload/exact-evm-payload';

type AnyClient = Client<Transport, Chain | undefined>;

/** Where Multicall3 lives on every chain that has it (the devnet installs it there too). */
export const MULTICALL3_ADDRESS: Address = '0xcA11bde05977b3631167028862bE2a173976CA11';

/** Clients whose chain has no working Multicall3: asked with two calls at once instead. */
const withoutMulticall = new WeakSet<object>();

export interface CheckExactEvmPaymentOnChainParameters extends OnChainCheckInput {
  client: AnyClient;
}

/**
 * What a facilitator's `/verify` reads from the chain beyond the local pre-verification, in one
 * `eth_call` (Multicall3 `aggregate3` at its canonical address): the payer's token balance and
 * `authorizationState(from, nonce)`. A chain without Multicall3 there is asked with two
 * `eth_call`s at once (and remembered). Never throws: a read that fails is `unknown`.
 */
export async function checkExactEvmPaymentOnChain(
  parameters: CheckExactEvmPaymentOnChainParameters,
): Promise<OnChainCheck> {
  const { client, requirements } = parameters;
  const parsed = parseExactEvmPayloadFast(parameters.payload.payload);
  if (!parsed) return { status: 'unknown', message: 'the payload is not a plain exact EVM payload' };
  const { from, nonce, value } = parsed.authorization;
  const asset = requirements.asset as Address;
  let read: { balance: bigint; used: boolean };
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
  if (read.balance < BigInt(value))
    return {
      status: 'invalid',
      reason: ExactEvmReason.insufficientBalance,
      message: `balance ${read.balance} is below ${value}`,
    };
  return { status: 'valid' };
}

async function readBalanceAndState(
  client: AnyClient,
  asset: Address,
  from: Address,
  nonce: Hex,
): Promise<{ balance: bigint; used: boolean }> {
  const balanceCall = { address: asset, abi: eip3009Abi, functionName: 'balanceOf', args: [from] } as const;
  const stateCall = {
    address: asset,
    abi: eip3009Abi,
    functionName: 'authorizationState',
    args: [from, nonce],
  } as const;
  if (!withoutMulticall.has(client)) {
    try {
      const [balance, used] = await multicall(client, {
        contracts: [balanceCall, stateCall],
        multicallAddress: MULTICALL3_ADDRESS,
        allowFailure: false,
        blockTag: 'latest',
      });
      return { balance, used };
    } catch (error) {
      if (isTransportError(error)) throw error;
      // No Multicall3 at its address, or the token reverted: the two calls alone tell which.
    }
  }
  const [balance, used] = await Promise.all([
    readContract(client, { ...balanceCall, blockTag: 'latest' }),
    readContract(client, { ...stateCall, blockTag: 'latest' }),
  ]);
  withoutMulticall.add(client);
  return { balance, used };
}
