import { isAddressEqual } from 'viem';
import { DEFAULT_ASSETS } from './default-assets';
import type { EvmAsset } from './define-asset';

export interface FindAssetParameters {
  network: string;
  /** Look for this token address; without it, the first asset of the network. */
  address?: string | undefined;
  /** Assets searched before the defaults (custom chains, devnet tokens). */
  assets?: readonly EvmAsset[] | undefined;
}
export type FindAssetReturnType = EvmAsset | undefined;

/**
 * Finds an asset for a network: first among `assets`, then among {@link DEFAULT_ASSETS}.
 *
 * @example findAsset({ network: 'eip155:8453' })?.name // 'USD Coin'
 */
export function findAsset(parameters: FindAssetParameters): FindAssetReturnType {
  const { network, address, assets = [] } = parameters;
  for (const list of [assets, DEFAULT_ASSETS]) {
    for (const asset of list) {
      if (asset.network !== network) continue;
      if (address === undefined || sameAddress(asset.address, address)) return asset;
    }
  }
  return undefined;
}

function sameAddress(a: string, b: string): boolean {
  try {
    return isAddressEqual(a as `0x${string}`, b as `0x${string}`);
  } catch {
    return false;
  }
}
