import {
  decodeHeaderJson,
  encodeHeader,
  type PaymentPayload,
  type PaymentPayloadV1,
  PaymentRequired,
  PaymentRequiredV1,
  type PaymentRequirements,
  type PaymentRequirementsV1,
  SettleResponse,
  TollboothError,
  V1_NETWORKS,
} from '@tollbooth/core';
import {
  advertisedPaymentIdentifier,
  attachPaymentIdentifier,
  generatePaymentIdentifier,
  isPaymentIdentifier,
} from './payment-identifier';
import { PaidRoutes, type SignInOffer, signInOfferOf } from './sign-in';
import { SpendLedger } from './spend-limits';

/** Signs payments for the requirements it supports. `@tollbooth/evm` provides one per account. */
export interface PaymentSigner {
  /** Whether this signer can pay a requirement (scheme, network in the form of its version, asset). */
  supports(requirement: PaymentRequirements | PaymentRequirementsV1, x402Version: 1 | 2): boolean;
  createPayload(paymentRequired: PaymentRequired, requirement: PaymentRequirements): Promise<PaymentPayload>;
  /**
   * Signs a sign-in offer (sign-in-with-x): the `SIGN-IN-WITH-X` header value, or `undefined` when
   * it cannot sign on the offer's chain. Without it the client always pays.
   */
  signIn?(offer: SignInOffer): Promise<string | undefined>;
  /** For x402 v1 routes; without it v1 challenges are not paid. */
  createPayloadV1?(
    paymentRequired: PaymentRequiredV1,
    requirement: PaymentRequirementsV1,
  ): Promise<PaymentPayloadV1>;
}

export interface PayingClientOptions {
  signer: PaymentSigner;
  /** Largest single payment in atomic units (e.g. `10_000n` = 0.01 USDC). Required: never pay blind. */
  maxAmountPerPayment: bigint | string;
  /** Largest total over the client's lifetime, in atomic units. Default: no total limit. */
  maxTotal?: bigint | string;
  /** Only pay these assets (compared case-insensitively), e.g. `[{ network: 'eip155:8453', asset: '0x8335…' }]`. */
  allowedAssets?: Array<{ network: string; asset: string }>;
  /** The fetch to wrap. Default: the global fetch. */
  fetch?: typeof fetch;
  /** Retries of the exact same payload after a 502 `retry_exact_payment_payload` or a 409 `payment_in_progress`. Default 4. */
  maxRetries?: number;
  /** First backoff delay in ms, doubled each retry (with jitter), capped by `maxRetryDelayMs`. Default 250. */
  retryDelayMs?: number;
  /** Default 5000. */
  maxRetryDelayMs?: number;
  /**
   * The `payment-identifier` extension: when a challenge advertises it, name each call's payment
   * with an identifier (a new one per call unless the call supplies its own), so a server that
   * speaks it answers a repeated call from the first payment instead of charging again. `false`:
   * never send one. Default true.
   */
  paymentIdentifier?: boolean;
  /**
   * Sign-in-with-x (docs/sign-in-with-x.md): where this client paid for a route (method and
   * resource URL) and the route's challenge offers sign-in on that network, answer the 402 by
   * signing in first, and pay only when the server refuses the sign-in. Default true.
   */
  signIn?: boolean;
  /** Picks among the payable requirements. Default: the cheapest. */
  select?: (
    candidates: Array<PaymentRequirements | PaymentRequirementsV1>,
  ) => PaymentRequirements | PaymentRequirementsV1;
}

export const DEFAULTS = {
  maxRetries: 4,
  retryDelayMs: 250,
  maxRetryDelayMs: 5000,
} as const;

/** Options of one call to `pay`. */
export interface PayCallOptions {
  /**
   * This call's payment identifier (16–128 of A–Z, a–z, 0–9, `-`, `_`; see
   * `generatePaymentIdentifier`): pass the same one again when you repeat the call yourself — after
   * a thrown network error, a restart — and a server that speaks the extension answers it from the
   * first payment, whatever the new signature. `false`: none on this call. Default: a new one when
   * the client's `paymentIdentifier` option is on.
   */
  paymentIdentifier?: string | false;
}

/** What one paid call did. */
export interface PaidResponse {
  response: Response;
  /** The challenge the server sent, if it asked for payment. */
  paymentRequired?: PaymentRequired | PaymentRequiredV1;
  /** The payload that was sent (the same one on every retry). */
  payload?: PaymentPayload | PaymentPayloadV1;
  /** The decoded `PAYMENT-RESPONSE` / `X-PAYMENT-RESPONSE` settlement receipt. */
  receipt?: SettleResponse;
  /** Requests sent with the payment: 1, plus one per retry of the same payload. */
  attempts: number;
  /** The identifier the payment carried (the challenge advertised the extension), else undefined. */
  paymentIdentifier?: string;
  /** True when the answer came by signing in (access a payment bought before), with no payment. */
  signedIn?: boolean;
}

/** The codes of {@link PaymentClientError}, each in core's code table (docs/errors.md). */
export type PaymentClientErrorCode =
  | 'invalid_challenge'
  | 'no_payable_requirement'
  | 'spend_limit_exceeded'
  | 'payment_already_attempted'
  | 'invalid_payment_identifier';

/** Why a paying client refused to pay. */
export class PaymentClientError extends TollboothError {
  override readonly name: string = 'PaymentClientError';
  declare readonly code: PaymentClientErrorCode;
  /** `spend_limit_exceeded`: the cheapest payable requirement's amount, atomic units. */
  readonly amount?: bigint;
  constructor(code: PaymentClientErrorCode, message: string, details: { amount?: bigint } = {}) {
    super(code, message);
    if (details.amount !== undefined) this.amount = details.amount;
  }
}

export interface PayingClient {
  /** Like `fetch`; pays a 402 within the limits and returns the final response. */
  fetch(input: string | URL | Request, init?: RequestInit): Promise<Response>;
  /** Like `fetch`, with the challenge, payload and decoded receipt; `call` names the payment. */
  pay(input: string | URL | Request, init?: RequestInit, call?: PayCallOptions): Promise<PaidResponse>;
  /** Atomic units committed so far (payments refused with 402 are not counted). */
  readonly spent: bigint;
}

const RETRY_INSTRUCTION = 'retry_exact_payment_payload';

/**
 * Creates a client that pays x402 challenges: on 402 it reads the challenge (the
 * `PAYMENT-REQUIRED` header, or a v1 body), picks a requirement within its spend limits, signs
 * it, and sends the same request once more with the payment. On a 502 carrying
 * `retry_exact_payment_payload` (or a 409 `payment_in_progress`) it resends the **exact same**
 * payload with backoff; it never signs a second payment on its own. When the challenge advertises
 * the `payment-identifier` extension the payment carries an identifier, the same on every retry
 * (docs/payment-identifier.md).
 *
 * @example
 * const client = createPayingClient({ signer: createEvmPaymentSigner({ account }), maxAmountPerPayment: 10_000n });
 * const { response, receipt } = await client.pay('http://localhost:3000/api/v1/fees/now');
 */
export function createPayingClient(options: PayingClientOptions): PayingClient {
  const baseFetch = options.fetch ?? globalThis.fetch;
  const maxRetries = options.maxRetries ?? DEFAULTS.maxRetries;
  const retryDelayMs = options.retryDelayMs ?? DEFAULTS.retryDelayMs;
  const maxRetryDelayMs = options.maxRetryDelayMs ?? DEFAULTS.maxRetryDelayMs;
  const limits = new SpendLedger({
    maxPerPayment: BigInt(options.maxAmountPerPayment),
    maxTotal: options.maxTotal === undefined ? undefined : BigInt(options.maxTotal),
  });
  const allowed = options.allowedAssets?.map((a) => `${a.network}|${a.asset.toLowerCase()}`);
  const paidRoutes = new PaidRoutes();
  const select =
    options.select ??
    ((candidates) => candidates.reduce((best, c) => (amountOf(c) < amountOf(best) ? c : best)));

  async function pay(
    input: string | URL | Request,
    init?: RequestInit,
    call: PayCallOptions = {},
  ): Promise<PaidResponse> {
    const chosenId = call.paymentIdentifier;
    if (chosenId !== undefined && chosenId !== false && !isPaymentIdentifier(chosenId)) {
      throw new PaymentClientError(
        'invalid_payment_identifier',
        'a payment identifier is 16 to 128 characters of A-Z, a-z, 0-9, "-" and "_"',
      );
    }
    const template = new Request(input, init);
    if (template.headers.has('payment-signature') || template.headers.has('x-payment')) {
      throw new PaymentClientError(
        'payment_already_attempted',
        'the request already carries a payment header',
      );
    }
    const first = await baseFetch(template.clone());
    if (first.status !== 402) return { response: first, attempts: 0 };

    let paymentRequired = await readChallenge(first);
    const signedIn = await trySignIn(template, paymentRequired);
    if (signedIn && signedIn.status !== 402)
      return { response: signedIn, paymentRequired, attempts: 0, signedIn: true };
    // Refused: the refusal carries a fresh challenge, the one to pay.
    if (signedIn) paymentRequired = await readChallenge(signedIn);
    const x402Version = paymentRequired.x402Version;
    const candidates = (paymentRequired.accepts as Array<PaymentRequirements | PaymentRequirementsV1>).filter(
      (r) =>
        options.signer.supports(r, x402Version) &&
        (!allowed || allowed.includes(`${networkOf(r, x402Version)}|${r.asset.toLowerCase()}`)),
    );
    if (candidates.length === 0) {
      throw new PaymentClientError(
        'no_payable_requirement',
        'no requirement in the challenge can be paid by this signer',
      );
    }
    const affordable = candidates.filter((r) => limits.allows(amountOf(r)));
    if (affordable.length === 0) {
      const cheapest = minAmount(candidates);
      throw new PaymentClientError(
        'spend_limit_exceeded',
        `the cheapest payable requirement (${cheapest} atomic units) exceeds the spend limits`,
        { amount: cheapest },
      );
    }
    const requirement = select(affordable);
    const amount = amountOf(requirement);

    // Reserved before signing, so concurrent calls cannot all pass the limit check at once.
    limits.reserve(amount);
    let payload: PaymentPayload | PaymentPayloadV1;
    try {
      payload =
        paymentRequired.x402Version === 2
          ? await options.signer.createPayload(paymentRequired, requirement as PaymentRequirements)
          : await signV1(paymentRequired, requirement as PaymentRequirementsV1);
    } catch (error) {
      limits.refund(amount);
      throw error;
    }
    // Named once, before the first send: every retry below resends this very payload, identifier included.
    let paymentIdentifier: string | undefined;
    const declared =
      paymentRequired.x402Version === 2 ? advertisedPaymentIdentifier(paymentRequired) : undefined;
    if (declared && chosenId !== false && (chosenId !== undefined || options.paymentIdentifier !== false)) {
      paymentIdentifier = chosenId ?? generatePaymentIdentifier();
      payload = attachPaymentIdentifier(payload as PaymentPayload, declared, paymentIdentifier);
    }
    const headerName = paymentRequired.x402Version === 2 ? 'PAYMENT-SIGNATURE' : 'X-PAYMENT';
    const headerValue = encodeHeader(payload);

    let attempts = 0;
    let response: Response;
    for (;;) {
      const request = template.clone();
      request.headers.set(headerName, headerValue);
      attempts += 1;
      try {
        response = await baseFetch(request);
      } catch (error) {
        // The payment may or may not have arrived: the same payload is the only safe retry.
        if (attempts > maxRetries) throw error;
        await sleep(backoff(attempts, retryDelayMs, maxRetryDelayMs));
        continue;
      }
      if (attempts <= maxRetries && (await asksForSamePayload(response))) {
        await sleep(
          retryAfter(response, maxRetryDelayMs) ?? backoff(attempts, retryDelayMs, maxRetryDelayMs),
        );
        continue;
      }
      break;
    }
    if (response.status === 402) limits.refund(amount);
    const receipt = readReceipt(response);
    if (receipt?.success && paymentRequired.x402Version === 2)
      paidRoutes.remember(template.method, paymentRequired.resource.url, receipt.network);
    return {
      response,
      paymentRequired,
      payload,
      receipt,
      attempts,
      ...(paymentIdentifier === undefined ? {} : { paymentIdentifier }),
    };

    /** Signs in where this client paid for the route and the challenge offers it: the answer, or undefined. */
    async function trySignIn(
      request: Request,
      challenge: PaymentRequired | PaymentRequiredV1,
    ): Promise<Response | undefined> {
      if (options.signIn === false || !options.signer.signIn || challenge.x402Version !== 2) return undefined;
      const network = paidRoutes.networkOf(request.method, challenge.resource.url);
      const offer = network ? signInOfferOf(challenge, request.url, network) : undefined;
      const proof = offer ? await options.signer.signIn(offer).catch(() => undefined) : undefined;
      if (!proof) return undefined;
      const signed = request.clone();
      signed.headers.set('SIGN-IN-WITH-X', proof);
      const answer = await baseFetch(signed);
      // No access left (the pass ended, the uses ran out): pay, and remember the route again then.
      if (answer.status === 402) paidRoutes.forget(request.method, challenge.resource.url);
      return answer;
    }

    async function signV1(
      challenge: PaymentRequiredV1,
      req: PaymentRequirementsV1,
    ): Promise<PaymentPayloadV1> {
      if (!options.signer.createPayloadV1) {
        throw new PaymentClientError('no_payable_requirement', 'the signer cannot pay x402 v1 challenges');
      }
      return options.signer.createPayloadV1(challenge, req);
    }
  }

  return {
    pay,
    fetch: async (input, init) => (await pay(input, init)).response,
    get spent() {
      return limits.committed;
    },
  };
}

/** Reads the challenge of a 402: the `PAYMENT-REQUIRED` header (v2), else a v1 JSON body. */
export async function readChallenge(response: Response): Promise<PaymentRequired | PaymentRequiredV1> {
  const header = response.headers.get('payment-required');
  if (header) {
    const parsed = PaymentRequired.safeParse(safeDecode(header));
    if (parsed.success) return parsed.data;
    throw new PaymentClientError(
      'invalid_challenge',
      `PAYMENT-REQUIRED is not a valid x402 v2 challenge: ${parsed.error.message}`,
    );
  }
  const body = await response.text().then(
    (text) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return undefined;
      }
    },
    () => undefined,
  );
  const v1 = PaymentRequiredV1.safeParse(body);
  if (v1.success) return v1.data;
  throw new PaymentClientError(
    'invalid_challenge',
    'the 402 carries neither a PAYMENT-REQUIRED header nor a v1 body',
  );
}

/** Decodes the settlement receipt of a response, if it carries one. */
export function readReceipt(response: Response): SettleResponse | undefined {
  const header = response.headers.get('payment-response') ?? response.headers.get('x-payment-response');
  if (!header) return undefined;
  const parsed = SettleResponse.safeParse(safeDecode(header));
  return parsed.success ? parsed.data : undefined;
}

function safeDecode(value: string): unknown {
  try {
    return decodeHeaderJson(value);
  } catch {
    return undefined;
  }
}

async function asksForSamePayload(response: Response): Promise<boolean> {
  if (response.status !== 502 && response.status !== 409) return false;
  const body = (await response
    .clone()
    .json()
    .catch(() => undefined)) as { error?: { code?: string; retry?: { instruction?: string } } } | undefined;
  if (response.status === 502) return body?.error?.retry?.instruction === RETRY_INSTRUCTION;
  return body?.error?.code === 'payment_in_progress';
}

function amountOf(requirement: PaymentRequirements | PaymentRequirementsV1): bigint {
  const { amount, maxAmountRequired } = requirement as { amount?: string; maxAmountRequired?: string };
  return BigInt(amount ?? maxAmountRequired ?? '0');
}

function minAmount(requirements: Array<PaymentRequirements | PaymentRequirementsV1>): bigint {
  // biome-ignore lint/complexity/useMathMinMax: Math.min does not take bigints
  return requirements.map(amountOf).reduce((a, b) => (b < a ? b : a));
}

function networkOf(requirement: PaymentRequirements | PaymentRequirementsV1, x402Version: 1 | 2): string {
  return x402Version === 2 ? requirement.network : (V1_NETWORKS[requirement.network] ?? requirement.network);
}

function backoff(attempt: number, base: number, cap: number): number {
  const exp = Math.min(cap, base * 2 ** (attempt - 1));
  return exp / 2 + Math.random() * (exp / 2);
}

function retryAfter(response: Response, cap: number): number | undefined {
  const value = response.headers.get('retry-after');
  if (!value || !/^\d+$/.test(value)) return undefined;
  return Math.min(Number(value) * 1000, cap);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
