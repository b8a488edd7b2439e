import { type AssetAmount, type Price, toAtomicAmount } from '@tollbooth/core';
import { getAddress } from 'viem';
import type { EvmAsset } from '../assets/define-asset';
import { findAsset } from '../assets/find-asset';
import { EvmErrorCode, EvmSchemeError } from '../errors';
import { checkEvmAddress } from '../utils/check-evm-address';

export interface ResolveExactEvmPriceParameters {
  price: Price;
  network: string;
  /** Assets searched before the defaults. */
  assets?: readonly EvmAsset[] | undefined;
}
export type ResolveExactEvmPriceReturnType = AssetAmount;
export type ResolveExactEvmPriceErrorType = EvmSchemeError;

/**
 * Turns a route price into an amount of an EIP-3009 token: `"$0.01"` or `0.01` is USD, paid in the
 * network's first known asset (USDC), converted with exact decimal arithmetic and truncated;
 * `{ amount, asset, extra }` is taken as given, with the EIP-712 `{ name, version }` filled in from
 * the registry when the asset is known.
 *
 * @throws {EvmSchemeError} `invalid_amount` for a malformed price, an unknown network, or an
 *   explicit asset whose EIP-712 domain is unknown.
 * @example
 * resolveExactEvmPrice({ price: '$0.001', network: 'eip155:8453' })
 * // { amount: '1000', asset: '0x8335…2913', extra: { name: 'USD Coin', version: '2' } }
 */
export function resolveExactEvmPrice(
  parameters: ResolveExactEvmPriceParameters,
): ResolveExactEvmPriceReturnType {
  const { price, network, assets } = parameters;
  if (typeof price === 'string' || typeof price === 'number') {
    const asset = findAsset({ network, assets });
    if (!asset) {
      throw new EvmSchemeError(
        EvmErrorCode.invalidPrice,
        `No asset is known for network ${network}: declare one with defineAsset() or give the price as { amount, asset, extra }`,
      );
    }
    return {
      amount: toAtomicAmount(price, asset.decimals),
      asset: asset.address,
      extra: { name: asset.name, version: asset.version },
    };
  }
  const problems: string[] = [];
  if (typeof price.amount !== 'string' || !/^\d+$/.test(price.amount))
    problems.push(`amount "${String(price.amount)}" must be a decimal string of atomic units`);
  const assetProblem = checkEvmAddress({ address: price.asset });
  if (assetProblem) problems.push(`asset ${assetProblem}`);
  if (problems.length > 0) {
    throw new EvmSchemeError(EvmErrorCode.invalidPrice, `Invalid price: ${problems.join('; ')}`, problems);
  }
  const known = findAsset({ network, address: price.asset, assets });
  const extra = {
    ...(known ? { name: known.name, version: known.version } : {}),
    ...(price.extra ?? {}),
  };
  if (typeof extra['name'] !== 'string' || typeof extra['version'] !== 'string') {
    throw new EvmSchemeError(
      EvmErrorCode.invalidPrice,
      `Price asset ${price.asset} on ${network} needs extra.name and extra.version (its EIP-712 domain)`,
    );
  }
  return { amount: price.amount, asset: getAddress(price.asset), extra };
}
