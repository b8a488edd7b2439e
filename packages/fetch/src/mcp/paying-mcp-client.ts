import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  encodeHeader,
  type PaymentPayload,
  type PaymentPayloadV1,
  PaymentRequired,
  PaymentRequiredV1,
  type PaymentRequirements,
  type PaymentRequirementsV1,
  SettleResponse,
  V1_NETWORKS,
} from '@tollbooth/core';
import { DEFAULTS, PaymentClientError, type PaymentSigner } from '../paying-fetch';
import {
  advertisedPaymentIdentifier,
  attachPaymentIdentifier,
  generatePaymentIdentifier,
} from '../payment-identifier';
import { SpendLedger } from '../spend-limits';

/** The x402 MCP transport's `_meta` keys (docs/mcp.md#the-_meta-keys). */
const PAYMENT = 'x402/payment';
const RECEIPT = 'x402/payment-response';
const V1_PAYMENT = 'x402.payment';
const V1_RECEIPT = 'x402.payment-response';
/** Answers after which only the exact same payload may be sent again. */
const SAME_PAYLOAD = new Set(['settlement_uncertain', 'payment_in_progress', 'paid_response_unavailable']);

export interface PayingMcpClientOptions {
  /** A connected MCP SDK client. */
  client: Pick<Client, 'callTool'>;
  signer: PaymentSigner;
  /** Largest single payment in atomic units. Required: never pay blind. */
  maxAmountPerPayment: bigint | string;
  /** Largest total over this session (the client's lifetime), in atomic units. Default: none. */
  maxTotal?: bigint | string;
  /** Only pay these assets (compared case-insensitively). */
  allowedAssets?: Array<{ network: string; asset: string }>;
  /** Resends of the exact same payload after `settlement_uncertain` or `payment_in_progress`. Default 4. */
  maxRetries?: number;
  /** First backoff delay in ms, doubled each retry, capped by `maxRetryDelayMs`. Default 250. */
  retryDelayMs?: number;
  /** Default 5000. */
  maxRetryDelayMs?: number;
}

/** What one tool call did. */
export interface PaidToolCall {
  /** The final tool result. */
  result: CallToolResult;
  /** The challenge the tool answered first, if it asked for payment. */
  paymentRequired?: PaymentRequired | PaymentRequiredV1;
  /** The payload sent (the same one on every retry). */
  payload?: PaymentPayload | PaymentPayloadV1;
  /** The settlement receipt of the final result. */
  receipt?: SettleResponse;
  /** Calls made with the payment: 1, plus one per resend of the same payload. */
  attempts: number;
}

export interface PayingMcpClient {
  /** Calls a tool; pays its challenge within the limits, resends only the exact payload after an uncertain answer. */
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<PaidToolCall>;
  /** Atomic units committed this session (refused and released payments are given back). */
  readonly spent: bigint;
  /** Every receipt received this session, in order. */
  readonly receipts: readonly SettleResponse[];
}

/**
 * An MCP client that pays x402 tools (the tool-result binding): the challenge is read from the
 * `isError` result (`structuredContent`, else `content[0].text`), a requirement is signed within
 * the spend limits (per payment and per session) and the call is made again with the payment in
 * `_meta["x402/payment"]` (a v1 challenge: `_meta["x402.payment"]`). After `settlement_uncertain`
 * (or `payment_in_progress`, `paid_response_unavailable`) it resends **the exact same payload**
 * with backoff and never signs a second payment: the 502 discipline of the HTTP client. A payment
 * refused or released (the tool failed) is given back to the limits; one whose outcome stays
 * unknown stays counted. The payment is built from the chosen requirement alone, so it stays small.
 *
 * @example
 * const payer = createPayingMcpClient({ client, signer: createEvmPaymentSigner({ account }), maxAmountPerPayment: 10_000n, maxTotal: 100_000n });
 * const { result, receipt } = await payer.callTool({ name: 'get_fee_timing_decision' });
 */
export function createPayingMcpClient(options: PayingMcpClientOptions): PayingMcpClient {
  const limits = new SpendLedger({
    maxPerPayment: BigInt(options.maxAmountPerPayment),
    maxTotal: options.maxTotal === undefined ? undefined : BigInt(options.maxTotal),
  });
  const receipts: SettleResponse[] = [];
  const maxRetries = options.maxRetries ?? DEFAULTS.maxRetries;
  const retryDelayMs = options.retryDelayMs ?? DEFAULTS.retryDelayMs;
  const maxRetryDelayMs = options.maxRetryDelayMs ?? DEFAULTS.maxRetryDelayMs;
  const allowed = options.allowedAssets?.map((a) => `${a.network}|${a.asset.toLowerCase()}`);

  async function callTool(params: {
    name: string;
    arguments?: Record<string, unknown>;
  }): Promise<PaidToolCall> {
    const base = { name: params.name, arguments: params.arguments ?? {} };
    const first = (await options.client.callTool(base)) as CallToolResult;
    const paymentRequired = challengeOf(first);
    if (!paymentRequired) return { result: first, attempts: 0, ...receiptOf(first) };

    const { requirement, amount } = choose(paymentRequired);
    limits.reserve(amount);
    let payload: PaymentPayload | PaymentPayloadV1;
    let meta: Record<string, unknown>;
    try {
      ({ payload, meta } = await sign(paymentRequired, requirement));
    } catch (error) {
      limits.refund(amount);
      throw error;
    }
    const paid = { ...base, _meta: meta };
    let attempts = 0;
    let result: CallToolResult;
    for (;;) {
      attempts += 1;
      try {
        result = (await options.client.callTool(paid)) as CallToolResult;
      } catch (error) {
        // The call may have reached the server: only the same payload may be sent again.
        if (attempts > maxRetries) throw error;
        await sleep(backoff(attempts, retryDelayMs, maxRetryDelayMs));
        continue;
      }
      if (attempts <= maxRetries && SAME_PAYLOAD.has(errorCodeOf(result) ?? '')) {
        await sleep(backoff(attempts, retryDelayMs, maxRetryDelayMs));
        continue;
      }
      break;
    }
    const { receipt } = receiptOf(result);
    if (receipt) receipts.push(receipt);
    // Charged, or maybe charged (the answer is still unknown): it stays counted.
    const unknown = SAME_PAYLOAD.has(errorCodeOf(result) ?? '');
    if (!receipt?.success && !unknown) limits.refund(amount);
    return { result, paymentRequired, payload, attempts, ...(receipt ? { receipt } : {}) };
  }

  /** The cheapest payable requirement within the limits. */
  function choose(challenge: PaymentRequired | PaymentRequiredV1) {
    const version = challenge.x402Version;
    const candidates = (challenge.accepts as Array<PaymentRequirements | PaymentRequirementsV1>).filter(
      (r) =>
        options.signer.supports(r, version) &&
        (!allowed || allowed.includes(`${caip2Of(r.network, version)}|${r.asset.toLowerCase()}`)),
    );
    if (candidates.length === 0)
      throw new PaymentClientError(
        'no_payable_requirement',
        'no requirement in the challenge can be paid by this signer',
      );
    const affordable = candidates.filter((r) => limits.allows(amountOf(r)));
    if (affordable.length === 0) {
      // biome-ignore lint/complexity/useMathMinMax: Math.min does not take bigints
      const cheapest = candidates.map(amountOf).reduce((a, b) => (b < a ? b : a));
      throw new PaymentClientError(
        'spend_limit_exceeded',
        `the cheapest payable requirement (${cheapest} atomic units) exceeds the spend limits`,
        { amount: cheapest },
      );
    }
    const requirement = affordable.reduce((best, r) => (amountOf(r) < amountOf(best) ? r : best));
    return { requirement, amount: amountOf(requirement) };
  }

  /** Signs the chosen requirement from a challenge holding it alone (and the identifier extension). */
  async function sign(
    challenge: PaymentRequired | PaymentRequiredV1,
    requirement: PaymentRequirements | PaymentRequirementsV1,
  ): Promise<{ payload: PaymentPayload | PaymentPayloadV1; meta: Record<string, unknown> }> {
    if (challenge.x402Version === 1) {
      if (!options.signer.createPayloadV1)
        throw new PaymentClientError('no_payable_requirement', 'the signer cannot pay x402 v1 challenges');
      const compact = { ...challenge, accepts: [requirement as PaymentRequirementsV1] };
      const payload = await options.signer.createPayloadV1(compact, requirement as PaymentRequirementsV1);
      return { payload, meta: { [V1_PAYMENT]: encodeHeader(payload) } };
    }
    const declared = advertisedPaymentIdentifier(challenge);
    const compact: PaymentRequired = {
      x402Version: 2,
      resource: challenge.resource,
      accepts: [requirement as PaymentRequirements],
    };
    let payload = await options.signer.createPayload(compact, requirement as PaymentRequirements);
    // A server that speaks payment-identifier answers a repeated call from the first payment.
    if (declared) payload = attachPaymentIdentifier(payload, declared, generatePaymentIdentifier());
    return { payload, meta: { [PAYMENT]: payload } };
  }

  return {
    callTool,
    get spent() {
      return limits.committed;
    },
    receipts,
  };
}

/** The PaymentRequired of an `isError` result: `structuredContent`, else `content[0].text`. */
export function challengeOf(result: CallToolResult): PaymentRequired | PaymentRequiredV1 | undefined {
  if (result.isError !== true) return undefined;
  const candidates: unknown[] = [result.structuredContent];
  const first = result.content?.[0];
  if (first?.type === 'text') {
    try {
      candidates.push(JSON.parse(first.text));
    } catch {
      // Not JSON: no challenge there.
    }
  }
  for (const candidate of candidates) {
    const v2 = PaymentRequired.safeParse(candidate);
    if (v2.success) return v2.data;
    const v1 = PaymentRequiredV1.safeParse(candidate);
    if (v1.success) return v1.data;
  }
  return undefined;
}

/** The receipt a result carries in `_meta` (v2 key, else the v1 key). */
export function receiptOf(result: CallToolResult): { receipt?: SettleResponse } {
  const raw = result._meta?.[RECEIPT] ?? result._meta?.[V1_RECEIPT];
  const parsed = SettleResponse.safeParse(raw);
  return parsed.success ? { receipt: parsed.data } : {};
}

/** The Error body's code of an `isError` result that is no challenge. */
function errorCodeOf(result: CallToolResult): string | undefined {
  if (result.isError !== true) return undefined;
  const error = (result.structuredContent as { error?: unknown } | undefined)?.error;
  const code = error && typeof error === 'object' ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

function caip2Of(network: string, version: 1 | 2): string {
  return version === 2 ? network : (V1_NETWORKS[network] ?? network);
}

function amountOf(requirement: PaymentRequirements | PaymentRequirementsV1): bigint {
  const { amount, maxAmountRequired } = requirement as { amount?: string; maxAmountRequired?: string };
  return BigInt(amount ?? maxAmountRequired ?? '0');
}

function backoff(attempt: number, base: number, cap: number): number {
  const exp = Math.min(cap, base * 2 ** (attempt - 1));
  return exp / 2 + Math.random() * (exp / 2);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
