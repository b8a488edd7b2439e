const EIP155 = /^eip155:([1-9]\d{0,15})$/;

export type GetChainIdErrorType = never;

/**
 * The numeric chain id of a CAIP-2 `eip155:<id>` network, or `undefined` for anything else.
 *
 * @example getChainId('eip155:8453') // 8453
 */
export function getChainId(network: string): number | undefined {
  const match = EIP155.exec(network);
  if (!match) return undefined;
  const id = Number(match[1]);
  return Number.isSafeInteger(id) ? id : undefined;
}
