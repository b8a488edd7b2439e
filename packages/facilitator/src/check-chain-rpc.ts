import { createPublicClient, formatEther, http } from 'viem';

export interface CheckChainRpcOptions {
  rpcUrl: string;
  /** The chain the facilitator settles on. */
  chainId: number;
  /** The account that pays the gas of settlements. */
  address: `0x${string}`;
  /** How long the RPC may take to answer, ms. Default 5 000. */
  timeoutMs?: number;
}

export interface ChainRpcCheck {
  /** Why the facilitator cannot work with this RPC (unreachable, another chain); absent when it can. */
  problem?: string;
  /** What will make settlements fail although the RPC works (no gas). */
  warnings: string[];
}

/**
 * Asks an RPC, once, what a facilitator needs before it serves anyone: that it answers, that
 * it is the configured chain, and that the settling account holds gas. A facilitator started
 * against a dead or wrong RPC would answer every verify and settle with an error instead.
 *
 * @example
 * const { problem, warnings } = await checkChainRpc({ rpcUrl, chainId: 8453, address });
 */
export async function checkChainRpc(options: CheckChainRpcOptions): Promise<ChainRpcCheck> {
  const { rpcUrl, chainId, address, timeoutMs = 5_000 } = options;
  const client = createPublicClient({ transport: http(rpcUrl, { timeout: timeoutMs, retryCount: 0 }) });
  let actual: number;
  try {
    actual = await client.getChainId();
  } catch (error) {
    const reason = (error as { shortMessage?: string; message?: string }).shortMessage ?? String(error);
    return { problem: `the RPC at ${rpcUrl} does not answer (${reason})`, warnings: [] };
  }
  if (actual !== chainId) {
    return {
      problem: `the RPC at ${rpcUrl} serves chain ${actual}, not the configured chain ${chainId}`,
      warnings: [],
    };
  }
  const warnings: string[] = [];
  try {
    const balance = await client.getBalance({ address });
    if (balance === 0n) {
      warnings.push(
        `the settling account ${address} holds no gas (0 ETH): every settlement will fail until it is funded`,
      );
    } else if (balance < 10n ** 14n) {
      warnings.push(`the settling account ${address} holds only ${formatEther(balance)} ETH of gas`);
    }
  } catch (error) {
    warnings.push(`the gas balance of ${address} could not be read: ${String(error)}`);
  }
  return { warnings };
}
