import { type Address, getAddress, isAddress } from 'viem';
import { EvmErrorCode, EvmSchemeError } from '../errors';
import { getChainId } from '../utils/get-chain-id';

/** An EIP-3009 token on one EVM network, with its EIP-712 domain. */
export interface EvmAsset {
  /** CAIP-2 network, e.g. `eip155:8453`. */
  readonly network: string;
  /** Token contract address (checksummed). */
  readonly address: Address;
  /** EIP-712 domain `name` of the token (e.g. `USD Coin` on Base, `USDC` on Base Sepolia). */
  readonly name: string;
  /** EIP-712 domain `version` of the token. */
  readonly version: string;
  /** Decimals of the token (6 for USDC). */
  readonly decimals: number;
  /** Display symbol. */
  readonly symbol?: string | undefined;
}

export interface DefineAssetParameters {
  network: string;
  address: string;
  name: string;
  version: string;
  decimals: number;
  symbol?: string | undefined;
}
export type DefineAssetReturnType = EvmAsset;
export type DefineAssetErrorType = EvmSchemeError;

/**
 * Declares an EIP-3009 token so prices like `"$0.01"` resolve to it on its network, e.g. a
 * devnet token or USDC on a chain the defaults do not list.
 *
 * @throws {EvmSchemeError} `invalid_config`, listing every invalid field at once.
 * @example
 * const asset = defineAsset({ network: 'eip155:31337', address: token, name: 'USD Coin', version: '2', decimals: 6 });
 */
export function defineAsset(parameters: DefineAssetParameters): DefineAssetReturnType {
  const { network, address, name, version, decimals, symbol } = parameters;
  const problems: string[] = [];
  if (getChainId(network) === undefined)
    problems.push(`network "${network}" is not an eip155:<chainId> network`);
  if (typeof address !== 'string' || !isAddress(address, { strict: false }))
    problems.push(`address "${String(address)}" is not an EVM address`);
  if (typeof name !== 'string' || name.length === 0)
    problems.push('name (EIP-712 domain name) must be a non-empty string');
  if (typeof version !== 'string' || version.length === 0)
    problems.push('version (EIP-712 domain version) must be a non-empty string');
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 36)
    problems.push(`decimals must be an integer from 0 to 36, got ${String(decimals)}`);
  if (problems.length > 0) {
    throw new EvmSchemeError(EvmErrorCode.invalidOptions, `Invalid asset: ${problems.join('; ')}`, problems);
  }
  return Object.freeze({
    network,
    address: getAddress(address),
    name,
    version,
    decimals,
    ...(symbol === undefined ? {} : { symbol }),
  });
}
