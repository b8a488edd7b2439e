import type {
  PaymentPayload,
  PaymentPayloadV1,
  PaymentRequirements,
  PaymentRequirementsV1,
  SettleResponse,
  SupportedResponse,
  VerifyResponse,
} from '../protocol/schemas';

/** Per-call options for a facilitator operation. */
export interface FacilitatorCallOptions {
  /** Aborts the call; the client also applies its own timeout. */
  signal?: AbortSignal;
}

/**
 * A facilitator: verifies and settles payments. Implementations: the HTTP client for any
 * facilitator URL, the in-process EVM facilitator of `@tollbooth/evm`, and a failover pool.
 *
 * `verify` and `settle` take the **server's own** requirements, never the client's copy.
 * A definitive answer (valid or not, settled or not) is returned; anything whose outcome is
 * unknown (timeout, network error, 5xx, an answer that does not parse) is thrown as a
 * `FacilitatorError` so the gate can tell "rejected" from "uncertain".
 */
export interface FacilitatorClient {
  verify(
    payload: PaymentPayload | PaymentPayloadV1,
    requirements: PaymentRequirements | PaymentRequirementsV1,
    options?: FacilitatorCallOptions,
  ): Promise<VerifyResponse>;
  settle(
    payload: PaymentPayload | PaymentPayloadV1,
    requirements: PaymentRequirements | PaymentRequirementsV1,
    options?: FacilitatorCallOptions,
  ): Promise<SettleResponse>;
  supported(options?: FacilitatorCallOptions): Promise<SupportedResponse>;
}

/** The facilitator operations, as keys of a per-operation auth-header hook (CDP needs a JWT each). */
export type FacilitatorOperation = 'verify' | 'settle' | 'supported';
