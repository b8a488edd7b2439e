import type { GateResponse, HandlerResponse, RequestView } from '../http/types';
import type { AccessGrant } from '../ledger/access-types';
import type { LedgerHooks } from '../ledger/hooks';
import type { LedgerEntry } from '../ledger/types';
import type {
  PaymentPayload,
  PaymentPayloadV1,
  PaymentRequirements,
  PaymentRequirementsV1,
  SettleResponse,
} from '../protocol/schemas';
import type { CompiledRoute } from '../routes/types';
import type { PaymentIdentity } from '../scheme';

/** What every request the gate lets through to its handler has. */
interface LetThrough {
  /** The request id that appears in Error bodies and logs. */
  requestId: string;
  /** Route key, e.g. `GET /api/v1/fees/now`. */
  route: string;
  /** Resource URL of the route. */
  resource: string;
  /** The payment: the one this request carries, or the one that bought its signed-in access. */
  identity: PaymentIdentity;
  payer: string;
}

/** A payment the gate accepted for a request (the `proceed` outcome's `payment`). */
export interface PaymentRequest extends LetThrough {
  via?: 'payment';
  /** The version of the payment: `1` for a v1 payload (a v1 route, or `acceptV1Payments`), else `2`. */
  x402Version: 1 | 2;
  /** Which header carried the payment: the receipt goes back in the matching response header. */
  header: 'payment-signature' | 'x-payment';
  payload: PaymentPayload | PaymentPayloadV1;
  requirements: PaymentRequirements | PaymentRequirementsV1;
  /** Present when the route settles before the handler runs. */
  settlement?: SettleResponse;
}

/**
 * A request let in by sign-in-with-x (docs/sign-in-with-x.md): its signer holds access to the
 * route that an earlier payment bought; nothing is paid or settled. `identity` is that payment.
 */
export interface SignedInRequest extends LetThrough {
  via: 'sign-in';
  /** The access grant this request took a use of (after the use). */
  access: AccessGrant;
  settlement?: undefined;
}

/** A request the gate lets through to its handler: paid, or signed in. */
export type PaidRequest = PaymentRequest | SignedInRequest;

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
export interface GateHooks extends LedgerHooks {
  /** A request matched a paid route, before any check (its availability, its payment). */
  onMatched?(event: GateEvent): void;
  /** A request without a payment was answered the 402 challenge (or the paywall page). */
  onChallenge?(event: GateEvent): void;
  /** A payment was verified and claimed: the handler runs next. */
  onVerified?(event: GateEvent & { payment: PaidRequest }): void;
  /**
   * A request was let in by sign-in-with-x (docs/sign-in-with-x.md): a use of the access an earlier
   * payment bought was taken, the handler runs next, nothing is paid (a 200 with no revenue).
   */
  onSignedIn?(event: GateEvent & { payment: SignedInRequest }): void;
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
  /**
   * A settled payment's stored answer was sent again (a retry or a duplicate); `request` is the
   * request it answers.
   */
  onReplay?(entry: LedgerEntry, request: RequestView): void;
}

/** The framework-neutral payment gate. */
export interface PaymentGate {
  /** A `proceed` outcome ends its payment by its own `settle(response)` or `release()`, once. */
  handle(request: RequestView): Promise<Outcome>;
}

export type { LedgerHooks, TransferEvent } from '../ledger/hooks';
