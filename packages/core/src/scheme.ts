import type { PaymentPayload, PaymentRequirements, SettleResponse } from './protocol/schemas';
import type { SchemeSignIn } from './sign-in/types';

export type { SchemeSignIn };

/** A price as a route declares it: `"$0.01"` / `0.01` (USD, the scheme picks the asset) or explicit. */
export type Price = string | number | AssetAmount;

/** An amount of a specific asset, in atomic units. */
export interface AssetAmount {
  /** Decimal string of atomic units, e.g. `"1000"` for 0.001 USDC. */
  amount: string;
  /** Asset address (for EVM: the token contract). */
  asset: string;
  /** Scheme-specific extra fields, e.g. `{ name: 'USD Coin', version: '2' }` (EIP-712 domain). */
  extra?: Record<string, unknown>;
}

/**
 * The payment's identity: what makes two payloads "the same payment" in the settlement ledger.
 * For EIP-3009 it is network, asset, payer and nonce, never the (malleable) signature bytes.
 * A stable string, lower-cased where the scheme is case-insensitive.
 */
export type PaymentIdentity = string;

/** Result of a scheme's local pre-verification (no network call). */
export type PreVerifyResult =
  | {
      ok: true;
      /** The payer's address, recovered from the signature. */
      payer: string;
      /** Identity used as the ledger key. */
      identity: PaymentIdentity;
      /** Unix seconds after which the authorization can no longer be settled. */
      validBefore: number;
      /**
       * False when the signature could not be checked locally (e.g. a smart-wallet signature the
       * facilitator verifies on chain). Such a payload is answered from an existing ledger entry
       * only if it is exactly the stored payload. Default true.
       */
      authenticated?: boolean;
    }
  | {
      ok: false;
      /** Official reason string, e.g. `invalid_exact_evm_signature`. */
      reason: string;
      message: string;
      /**
       * Set when the payload is authentic (its signature checks out) and only its time window
       * failed: the gate then looks the payment up in the ledger before refusing it, because an
       * expired authorization may be one that was already settled (replay, `payment_already_used`)
       * or whose settlement outcome is unknown (reconcile).
       */
      known?: { identity: PaymentIdentity; payer: string; validBefore: number };
    };

/**
 * What the chain says about a payment whose settlement outcome was unknown. `expired` means unused
 * with the chain's own time past the authorization's end, deep enough that no block can still
 * include its transfer; the server's clock never decides it (a transfer mined just before the end
 * may be reported late).
 */
export type ReconcileResult =
  | { status: 'settled'; receipt: SettleResponse }
  | { status: 'unsettled' }
  | { status: 'expired' }
  | { status: 'unknown'; message: string };

/** Whether a chain reader's answer shows the payment's transfer on chain (with its receipt). */
export function showsTransfer(
  answer: ReconcileResult,
): answer is Extract<ReconcileResult, { status: 'settled' }> {
  return answer.status === 'settled';
}

export interface ReconcileInput {
  payload: PaymentPayload;
  requirements: PaymentRequirements;
  /** Transaction hash already known for this settlement (from `settlement_pending`), if any. */
  transaction?: string;
  /** Unix seconds on the server's clock (expiry is judged by the chain's time, not by this). */
  now: number;
}

/**
 * The server side of a payment scheme on a family of networks (e.g. `exact` on `eip155:*`).
 * Core knows no chain; a scheme turns prices into requirements, identifies and pre-verifies
 * payloads locally, and finds out on chain what happened to an uncertain settlement.
 */
export interface SchemeServer {
  /** Scheme name on the wire, e.g. `exact`. */
  readonly scheme: string;
  /** Whether this scheme handles a CAIP-2 network. */
  supportsNetwork(network: string): boolean;
  /**
   * Says what is wrong with a recipient address (`payTo`) on a network, or returns `undefined`
   * when it is valid (for EVM: 0x and 40 hex digits, an EIP-55 checksum when mixed-case, not
   * the zero address). Optional: without it, core only requires a non-empty string.
   */
  checkAddress?(address: string, network: string): string | undefined;
  /** Turns a route's price into an asset amount on a network. Throws a `TollboothError` for config errors. */
  resolvePrice(price: Price, network: string): AssetAmount;
  /** Checks the payload locally against the server's requirements: signature, recipient, value, window. */
  preVerify(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    now: number,
  ): PreVerifyResult | Promise<PreVerifyResult>;
  /** Asks the chain whether an authorization was consumed. Optional: without it, uncertain stays uncertain. */
  reconcile?(input: ReconcileInput): Promise<ReconcileResult>;
  /**
   * Whether the chain reader for a network answers (for readiness checks): e.g. the latest block.
   * Optional; a scheme without a chain reader has none.
   */
  chainStatus?(network: string): Promise<ChainStatus>;
  /**
   * Confirms on chain that the transaction a facilitator reported as a successful settlement did
   * transfer this payment (`settled`, with the transaction that used the authorization). Anything
   * else keeps the payment uncertain: the paid answer is never sent on the facilitator's word
   * alone. Optional: without it (no chain reader), the gate takes the facilitator's word.
   */
  confirmSettlement?(input: ReconcileInput & { transaction: string }): Promise<ReconcileResult>;
  /**
   * Whether a chain reader is configured for a network (without asking it anything). Optional:
   * without it, a scheme with `reconcile` counts as having a reader for every network it supports.
   */
  hasChainReader?(network: string): boolean;
  /**
   * Sign-in on this scheme's networks (docs/sign-in-with-x.md): checks a `SIGN-IN-WITH-X` proof's
   * signature. Optional: a route's sign-in is offered only on networks whose scheme has it.
   */
  signIn?: SchemeSignIn;
  /**
   * The balance of `owner` in `asset` on `network` as the chain reader reads it now (atomic units):
   * what a `reserveBalance` route holds verified payments against
   * (docs/ledger.md#one-balance-one-side-effect). Throws when the chain cannot be asked. Optional:
   * without it (no chain reader), such a route cannot reserve.
   */
  balanceOf?(input: { network: string; asset: string; owner: string }): Promise<bigint>;
  /**
   * The rest of what a facilitator's `/verify` checks beyond `preVerify`, read from the chain in
   * one call: the payer's balance and whether the authorization is unused. With it (and a chain
   * reader for the network), a route that settles after its handler verifies locally instead of
   * calling `/verify` (docs/ledger.md#local-verify). Never throws: a chain that cannot be asked
   * answers `unknown`. Optional: without it, such a route calls `/verify`.
   */
  checkOnChain?(input: OnChainCheckInput): Promise<OnChainCheck>;
}

/**
 * What the chain says of a payment the scheme pre-verified, read in one call: the payer's balance
 * and the authorization's state (`checkOnChain`).
 * - `valid`: the balance covers the amount and the authorization is unused;
 * - `invalid`: it cannot settle (`reason` an official reason string, e.g.
 *   `invalid_exact_evm_insufficient_balance`, `invalid_exact_evm_nonce_already_used`);
 * - `unknown`: the chain could not be asked (the gate then asks the facilitator's `/verify`).
 */
export type OnChainCheck =
  | { status: 'valid' }
  | { status: 'invalid'; reason: string; message: string }
  | { status: 'unknown'; message: string };

/** What the chain is asked about a pre-verified payment (`checkOnChain`). */
export interface OnChainCheckInput {
  payload: PaymentPayload;
  requirements: PaymentRequirements;
  /** The payer `preVerify` recovered. */
  payer: string;
}

/** What a scheme's chain reader says about its network. */
export type ChainStatus = { ok: true; blockNumber?: bigint | number } | { ok: false; message: string };
