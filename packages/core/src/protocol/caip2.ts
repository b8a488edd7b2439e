import { V1_NETWORKS } from './schemas';

/** A CAIP-2 chain id: a namespace of 3–8 `[-a-z0-9]`, a colon, a reference of 1–32 `[-_a-zA-Z0-9]`. */
export const CAIP2_NETWORK = /^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/;

/**
 * Whether a network is written as a CAIP-2 chain id, the form x402 v2 uses on the wire.
 *
 * @example
 * isCaip2Network('eip155:8453') // true
 * isCaip2Network('base') // false (the x402 v1 name of eip155:8453)
 */
export function isCaip2Network(network: unknown): network is string {
  return typeof network === 'string' && CAIP2_NETWORK.test(network);
}

/**
 * Says what is wrong with a network setting, or `undefined` for a CAIP-2 chain id; an x402 v1
 * name (`base`, `base-sepolia`, …) gets its CAIP-2 form suggested.
 */
export function checkNetwork(name: string, network: unknown): string | undefined {
  if (isCaip2Network(network)) return undefined;
  if (typeof network !== 'string' || network === '')
    return `${name} is required (a CAIP-2 chain id such as eip155:8453)`;
  const caip = V1_NETWORKS[network];
  return caip
    ? `${name} "${network}" is an x402 v1 name: write it as the CAIP-2 chain id ${caip}`
    : `${name} "${network}" is not a CAIP-2 chain id (namespace:reference, e.g. eip155:8453)`;
}
