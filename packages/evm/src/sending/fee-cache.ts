import { BaseError, Eip1559FeesNotSupportedError } from 'viem';
import { estimateFeesPerGas } from 'viem/actions';
import type { ChainClient } from '../checks/chain-checks';

/** The fee fields of a transaction: EIP-1559 where the chain has it, a gas price elsewhere. */
export type Fees = { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint } | { gasPrice: bigint };

/**
 * The fees of one chain, read from the node and reused for `ttlMs`; concurrent readers share one
 * read. {@link forget} drops them, so the next reader reads again (after a "fee too low").
 */
export class FeeCache {
  readonly #client: ChainClient;
  readonly #ttlMs: number;
  #fees: { value: Fees; at: number } | undefined;
  #inFlight: Promise<Fees> | undefined;

  constructor(client: ChainClient, ttlMs: number) {
    this.#client = client;
    this.#ttlMs = ttlMs;
  }

  /** The fees to sign with now. */
  async current(): Promise<Fees> {
    if (this.#fees && Date.now() - this.#fees.at < this.#ttlMs) return this.#fees.value;
    if (!this.#inFlight) {
      this.#inFlight = this.#read().then(
        (value) => {
          this.#fees = { value, at: Date.now() };
          this.#inFlight = undefined;
          return value;
        },
        (error: unknown) => {
          this.#inFlight = undefined;
          throw error;
        },
      );
    }
    return this.#inFlight;
  }

  /** Drops the cached fees: the next {@link current} reads them from the node. */
  forget(): void {
    this.#fees = undefined;
  }

  async #read(): Promise<Fees> {
    const client = this.#client;
    const chain = client.chain;
    try {
      // Twice the base fee plus the tip (ethers' rule): valid for several blocks of rising base
      // fee, and only the actual base fee is paid.
      const fees = await estimateFeesPerGas(client, {
        chain: chain ? { ...chain, fees: { baseFeeMultiplier: 2, ...chain.fees } } : undefined,
        type: 'eip1559',
      });
      return { maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas };
    } catch (error) {
      if (!(error instanceof BaseError && error.walk((e) => e instanceof Eip1559FeesNotSupportedError)))
        throw error;
      const fees = await estimateFeesPerGas(client, { chain, type: 'legacy' });
      return { gasPrice: fees.gasPrice };
    }
  }
}
