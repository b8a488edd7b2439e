// The chain as the judge of the fault tests and the soak: the token's AuthorizationUsed and
// Transfer logs after a mark.
import type { Devnet } from '@tollbooth/devnet';
import type { Address, Hash, Hex } from 'viem';

/** `payer:nonce` (lower case): one authorization. */
export const authKey = (payer: string, nonce: string) => `${payer.toLowerCase()}:${nonce.toLowerCase()}`;

export interface ChainCharges {
  /** AuthorizationUsed by `payer:nonce`: the transactions that used it (more than one would be a double use). */
  used: Map<string, Hash[]>;
  /** Transfers to payTo after the mark: value and transaction. */
  transfers: { from: Address; value: bigint; transaction: Hash }[];
}

/** What the chain shows after block `mark`: authorizations used and transfers to payTo. */
export async function chargesSince(devnet: Devnet, mark: bigint): Promise<ChainCharges> {
  const fromBlock = mark;
  const [usedLogs, transferLogs] = await Promise.all([
    devnet.publicClient.getContractEvents({
      address: devnet.token.address,
      abi: devnet.token.abi,
      eventName: 'AuthorizationUsed',
      fromBlock,
    }),
    devnet.publicClient.getContractEvents({
      address: devnet.token.address,
      abi: devnet.token.abi,
      eventName: 'Transfer',
      args: { to: devnet.accounts.payTo.address },
      fromBlock,
    }),
  ]);
  const used = new Map<string, Hash[]>();
  for (const log of usedLogs.filter((entry) => entry.blockNumber > mark)) {
    const args = log.args as { authorizer: Address; nonce: Hex };
    const key = authKey(args.authorizer, args.nonce);
    used.set(key, [...(used.get(key) ?? []), log.transactionHash]);
  }
  const transfers = transferLogs
    .filter((entry) => entry.blockNumber > mark)
    .map((log) => {
      const args = log.args as { from: Address; value: bigint };
      return { from: args.from, value: args.value, transaction: log.transactionHash };
    });
  return { used, transfers };
}

/** The chain's height now: a window of {@link chargesSince} starts after it. */
export async function chainMark(devnet: Devnet): Promise<bigint> {
  return devnet.publicClient.getBlockNumber({ cacheTime: 0 });
}
