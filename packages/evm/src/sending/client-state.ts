import type { Hash } from 'viem';
import { SettlementSender, type SettlementSenderOptions, type SettlingClient } from './settlement-sender';

/** How long one gas estimate of `transferWithAuthorization` (v, r, s form) serves an asset. */
export const GAS_ESTIMATE_TTL_MS = 10 * 60_000;

/** Payments remembered as answered `settlement_pending` per client, at most (oldest dropped first). */
const MAX_UNCONFIRMED = 10_000;

/**
 * What settling through one client (one account on one chain) keeps between settlements: its
 * sender (nonces, fees, broadcasts, receipts), its gas limits per asset, and the payments whose
 * settlement answered `settlement_pending`.
 */
export class ClientSettlementState {
  readonly sender: SettlementSender;
  readonly #gasLimits = new Map<string, { gas: bigint; at: number }>();
  /**
   * Settlement transactions answered `settlement_pending`, by payment (chain, asset, payer,
   * authorization nonce): a second settle of the payment waits for that transaction instead of
   * sending another, which would revert once the first lands and answer a failure for a payment made.
   */
  readonly #unconfirmed = new Map<string, { hash: Hash; gas: bigint }>();

  constructor(client: SettlingClient, options?: SettlementSenderOptions) {
    this.sender = new SettlementSender(client, options);
  }

  /** The cached gas limit for `key`, unless older than {@link GAS_ESTIMATE_TTL_MS}. */
  gasLimit(key: string): bigint | undefined {
    const entry = this.#gasLimits.get(key);
    if (!entry || Date.now() - entry.at > GAS_ESTIMATE_TTL_MS) return undefined;
    return entry.gas;
  }

  rememberGasLimit(key: string, gas: bigint): void {
    this.#gasLimits.set(key, { gas, at: Date.now() });
  }

  forgetGasLimit(key: string): void {
    this.#gasLimits.delete(key);
  }

  /** The transaction of `paymentKey` that answered `settlement_pending`, if any. */
  unconfirmed(paymentKey: string): { hash: Hash; gas: bigint } | undefined {
    return this.#unconfirmed.get(paymentKey);
  }

  rememberUnconfirmed(paymentKey: string, sent: { hash: Hash; gas: bigint }): void {
    this.#unconfirmed.set(paymentKey, sent);
    if (this.#unconfirmed.size > MAX_UNCONFIRMED)
      this.#unconfirmed.delete(this.#unconfirmed.keys().next().value!);
  }

  forgetUnconfirmed(paymentKey: string): void {
    this.#unconfirmed.delete(paymentKey);
  }
}

const states = new WeakMap<object, ClientSettlementState>();

/** The one settlement state of a client, created on first use (`options` apply then only). */
export function settlementStateOf(
  client: SettlingClient,
  options?: SettlementSenderOptions,
): ClientSettlementState {
  let state = states.get(client);
  if (!state) {
    state = new ClientSettlementState(client, options);
    states.set(client, state);
  }
  return state;
}
