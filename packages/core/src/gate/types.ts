import type { HandlerResponse, LedgerEntry, LedgerResolution, StoredResponse } from '../ledger/types';
import type {
  PaymentPayload,
  PaymentPayloadV1,
  PaymentRequirements,
  PaymentRequirementsV1,
  SettleResponse,
} from '../protocol/schemas';
import type { CompiledRoute } from '../routes/compile-routes';
import type { PaymentIdentity } from '../scheme';

/** What an adapter tells the gate about a request. */
export interface RequestView {
  /** Upper-case HTTP method. */
  method: string;
  /**
   * The request URL as received, made absolute (`https://host/path?query`), **not** decoded or
   * normalised by the framework: the gate does its own decoding so path tricks cannot bypass a
   * paid route.
   */
  url: string;
  /** Case-insensitive header lookup; multiple values joined with `, `. */
  header(name: string): string | undefined;
  /** The framework's own request object, for hooks. */
  raw?: unknown;
  /**
   * The request body's bytes, read without consuming them (later parsers still read the body).
   * The gate asks for it only for a payment carrying a payment identifier (its request fingerprint
   * hashes the body), with the most bytes it takes; past them it throws `request_body_too_large`.
   * Without it the body counts as empty.
   */
  body?(maxBytes: number): Promise<Uint8Array>;
}

/** A response the gate wants sent. Header names are lower-case; the body is exact bytes. */
export type GateResponse = StoredResponse;

/** What the handler produced, as captured by the adapter. */
export type { HandlerResponse } from '../ledger/types';

/** A payment the gate accepted for a request; passed back to `finish` or `release`. */
export interface PaidRequest {
  /** The request id that appears in Error bodies and logs. */
  requestId: string;
  /** Route key, e.g. `GET /api/v1/fees/now`. */
  route: string;
  /** Resource URL of the route. */
  resource: string;
  identity: PaymentIdentity;
  payer: string;
  /** `2` for `PAYMENT-SIGNATURE` / v2 routes, `1` for a v1 route paid with `X-PAYMENT`. */
  x402Version: 1 | 2;
  /** Which header carried the payment: the receipt goes back in the matching response header. */
  header: 'payment-signature' | 'x-payment';
  payload: PaymentPayload | PaymentPayloadV1;
  requirements: PaymentRequirements | PaymentRequirementsV1;
  /** Present when the route settles before the handler runs. */
  settlement?: SettleResponse;
}

/** The gate's verdict on a request. */
export type Outcome =
  /** Not a paid route (or a preflight): let the request through untouched. */
  | { kind: 'pass' }
  /** Answer now: 400 / 402 / 409 / 410 / 502 / 503 … */
  | { kind: 'respond'; response: GateResponse }
  /** The payment was already settled for this resource: send the stored response again. */
  | { kind: 'replay'; response: GateResponse; entry: LedgerEntry }
  /**
   * Run the handler and buffer its response, then call `settle` with it (it settles unless the
   * handler failed, and returns exactly what to send; never throws), or `release` when the
   * handler threw (nothing is charged). Only the first of them acts.
   */
  | {
      kind: 'proceed';
      payment: PaidRequest;
      settle(response: HandlerResponse): Promise<GateResponse>;
      release(): Promise<void>;
    };

/** A transfer the ledger learnt of: one per payment that moved money, whoever confirmed it. */
export interface TransferEvent {
  /** The payment identity (ledger id). */
  id: PaymentIdentity;
  /** Route key. */
  route: string;
  network: string;
  payer?: string | undefined;
  transaction?: string | undefined;
  /**
   * Who confirmed it: `request` (the paying request's own settle), `retry` (a retry of an
   * uncertain payment: found on chain or settled again), `reconciler` (the background job).
   */
  via: 'request' | 'retry' | 'reconciler';
  /** The request whose settle or retry confirmed it; absent for the reconciler. */
  request?: RequestView | undefined;
}

/** A request at a paid route, as the lifecycle hooks see it. */
export interface GateEvent {
  requestId: string;
  /**
   * The request the event is about, the very object the adapter passed to `handle` (its `raw` is
   * the framework's request): a hook ties the event to its exchange without a per-request scope.
   */
  request: RequestView;
  /** The matched route: its `key`, and what it costs (`route.requirements[i].amount`, atomic units). */
  route: CompiledRoute;
  /** The resource URL of the request. */
  resource: string;
}

/** A matched request the gate refused, or whose payment failed after its handler ran. */
export interface GateFailure extends GateEvent {
  status: number;
  /** The error code of the answer (its Error body's `error.code`, or a 402 body's `error`). */
  code: string | undefined;
}

/**
 * Hooks the gate calls; all optional. Errors thrown by hooks are logged and ignored. The lifecycle
 * of a paid request: `onMatched`, then `onChallenge` (no payment), or `onVerified` then
 * `onSettled`, or `onReplay`, or `onFailed`.
 */
export interface GateHooks {
  /** A request matched a paid route, before any check (its availability, its payment). */
  onMatched?(event: GateEvent): void;
  /** A request without a payment was answered the 402 challenge (or the paywall page). */
  onChallenge?(event: GateEvent): void;
  /** A payment was verified and claimed: the handler runs next. */
  onVerified?(event: GateEvent & { payment: PaidRequest }): void;
  /**
   * A matched request answered 400 or more by the gate: refused before or at its payment, or its
   * payment failed after the handler ran. Not the plain challenge, a route precondition's own
   * answer, nor the handler's own error (nothing is charged for those).
   */
  onFailed?(event: GateFailure): void;
  /**
   * A request's payment settled (its own settle, or a before-handler settlement), once its response
   * is final; `request` is the request that carried it.
   */
  onSettled?(payment: PaidRequest, receipt: SettleResponse, request: RequestView): void | Promise<void>;
  /** A refusal (402 and the like), with its code. */
  onRejected?(requestId: string, code: string, message: string): void;
  /**
   * A verified payment's claim was released, nothing charged: its handler answered an error
   * (`status`, 400 or more) or threw (`status` undefined). The payer may pay again. `request` is
   * the request that carried the payment.
   */
  onReleased?(payment: PaidRequest, status: number | undefined, request: RequestView): void;
  /** Once per transfer, when the ledger records it as settled (metrics: transfers apart from replays). */
  onTransfer?(event: TransferEvent): void;
  /**
   * A settled payment's stored answer was sent again (a retry or a duplicate); `request` is the
   * request it answers.
   */
  onReplay?(entry: LedgerEntry, request: RequestView): void;
  /** The reconciler or a retry resolved an entry its own request could not (see `LedgerResolution`). */
  onResolved?(
    entry: Pick<LedgerEntry, 'id' | 'route' | 'network' | 'payer'>,
    resolution: LedgerResolution,
  ): void;
}

/** The framework-neutral payment gate. */
export interface PaymentGate {
  handle(request: RequestView): Promise<Outcome>;
  /**
   * Settles (unless the handler failed) and returns exactly what to send. Never throws. The same
   * as the `proceed` outcome's own `settle`.
   */
  finish(payment: PaidRequest, response: HandlerResponse): Promise<GateResponse>;
  /** The handler threw: release the claim, nothing is charged. The same as the outcome's `release`. */
  release(payment: PaidRequest): Promise<void>;
}
