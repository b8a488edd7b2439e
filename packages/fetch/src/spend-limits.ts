/** Spend limits of a paying client, in atomic units of the asset. */
export interface SpendLimits {
  /** Largest single payment. */
  maxPerPayment: bigint;
  /** Largest total over the client's lifetime; `undefined` for no total limit. */
  maxTotal?: bigint;
}

/**
 * Tracks what a client has committed to pay. An amount is reserved before a payment is sent and
 * given back only when the server definitively refused it (402): a payment whose outcome is
 * unknown (502, network error) stays counted, because it may have been charged.
 */
export class SpendLedger {
  #committed = 0n;
  readonly #limits: SpendLimits;

  constructor(limits: SpendLimits) {
    this.#limits = limits;
  }

  /** Atomic units committed so far. */
  get committed(): bigint {
    return this.#committed;
  }

  /** Whether `amount` fits the per-payment and the remaining total limit. */
  allows(amount: bigint): boolean {
    if (amount > this.#limits.maxPerPayment) return false;
    return this.#limits.maxTotal === undefined || this.#committed + amount <= this.#limits.maxTotal;
  }

  reserve(amount: bigint): void {
    this.#committed += amount;
  }

  refund(amount: bigint): void {
    this.#committed -= amount;
  }
}
