import type { FacilitatorClient } from '../facilitator/types';
import type { LedgerStore } from '../ledger/types';
import type { PaywallOptions } from '../paywall/paywall-options';
import { DEFAULT_MAX_PAYMENT_HEADER_BYTES } from '../protocol/codec';
import type { LedgerReconciler } from '../reconciler/reconciler';
import type { RoutesConfig, RouteTable } from '../routes/types';
import type { SchemeServer } from '../scheme';
import type { SignInOptions } from '../sign-in/types';
import type { GateHooks, PaymentGate } from './types';

/**
 * A pino-compatible logger. Money events — a resolution, a refusal after a transfer was asked
 * for, a refused replay of a charged payment — are logged at warn with the ledger entry's `id`;
 * `info` (optional) gets what the reconciler released (nothing was charged).
 */
export interface GateLogger {
  info?(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export interface PaymentGateOptions {
  /** The paid routes: a config (compiled here) or a table from `compileRoutes`. */
  routes: RoutesConfig | RouteTable;
  /** Scheme servers: resolve prices, pre-verify payloads, reconcile uncertain settlements. */
  schemes: readonly SchemeServer[];
  facilitator: FacilitatorClient;
  /** Settlement ledger store. Default: a new in-memory store (one process only). */
  ledger?: LedgerStore;
  /** Public origin of the API, used for resource URLs and canonical rules (when `routes` is a config). */
  baseUrl?: string;
  /**
   * Sign-in-with-x for the routes with a `signIn` policy (docs/sign-in-with-x.md): the secret that
   * signs the nonces of their challenges (the same on every instance) and how long a proof may be
   * used. Required when a route has `signIn`; such a gate needs `baseUrl` and a store with access
   * grants (every built-in store has them).
   */
  signIn?: SignInOptions;
  /** Longest payment header accepted, characters. Default 16 KiB. */
  maxPaymentHeaderBytes?: number;
  /** How long a duplicate waits for a payment in flight on another instance before 409, ms. Default 10 000. */
  inFlightWaitMs?: number;
  /** Poll interval of that wait, ms. Default 100. */
  pollIntervalMs?: number;
  /**
   * How long a claim holds before another instance (or the reconciler) may take it over, ms. The
   * lease of an entry a request is working on is renewed every third of it, so it only runs out
   * when the process died or hung. Default 10 000.
   */
  leaseMs?: number;
  /**
   * How often the background reconciler looks for uncertain settlements and entries of dead
   * instances, ms; 0 turns it off (then only retries resolve them). Default 2 000.
   */
  reconcileIntervalMs?: number;
  /**
   * Refuse to start when a paid route's scheme has no chain reader (it cannot reconcile uncertain
   * settlements, so a lost settle answer stays a 502). Default false: the gate warns once instead.
   */
  requireChainReader?: boolean;
  /**
   * Ask the facilitator's `/verify` before its `/settle` on every paid route. Default false: one
   * facilitator round trip per paid request — a route that settles before its handler goes
   * straight to `/settle`, which verifies as it settles (a refusal there is answered 402 like one
   * at verify — docs/ledger.md#states); a route that settles after its handler verifies locally
   * when its scheme has a chain reader (pre-verification plus one chain read of balance and
   * authorization state), and asks `/verify` without one or when that read fails
   * (docs/ledger.md#local-verify). A refusal at `/settle` after a local verify withholds the
   * handler's answer and charges nothing: the handler's work is the only cost.
   */
  verifyBeforeSettle?: boolean;
  /**
   * What a request gets at a paid route's path with a method no paid route there serves:
   * `method-not-allowed` answers 405 with `Allow` (default); `pass` lets it through to the
   * application (when it serves other methods there for free).
   */
  otherMethods?: 'method-not-allowed' | 'pass';
  /**
   * What the exact payload of a payment gets once it was settled and its answer sent
   * (docs/ledger.md#replay-a-stance): `stored-answer` (default) sends the stored answer again, byte
   * for byte, for the same resource within the replay window, so a client whose answer was lost
   * gets it without paying twice; `strict` refuses it with 402 `payment_already_used`, so a
   * payload buys one answer, and a client whose answer was lost has paid for nothing. Either way a
   * payment in flight is waited for, and an uncertain one, or one resolved after its request
   * ended, is answered as it resolves.
   */
  replay?: 'stored-answer' | 'strict';
  /**
   * Answer a browser with a page that pays with its wallet: a GET whose `Accept` names HTML and
   * not JSON gets the 402 as an HTML page, with the same status and `PAYMENT-REQUIRED` header
   * (docs/paywall.md). Machine clients are unaffected. Default false.
   */
  paywall?: boolean | PaywallOptions;
  /** How long entries are kept after their authorization expired, ms. Default 86 400 000. */
  retentionMs?: number;
  /**
   * Longest request body the gate fingerprints for a payment carrying a payment identifier, bytes;
   * a longer one answers 413 `request_body_too_large`. Default 1 048 576.
   */
  maxIdentifiedBodyBytes?: number;
  /** Identifies this process in ledger owners. Default: random. */
  instanceId?: string;
  hooks?: GateHooks;
  logger?: GateLogger;
  /** Epoch ms clock (tests). Default `Date.now`. */
  now?: () => number;
}

export const PAYMENT_GATE_DEFAULTS = {
  maxPaymentHeaderBytes: DEFAULT_MAX_PAYMENT_HEADER_BYTES,
  inFlightWaitMs: 10_000,
  pollIntervalMs: 100,
  leaseMs: 10_000,
  reconcileIntervalMs: 2_000,
  retentionMs: 86_400_000,
  maxIdentifiedBodyBytes: 1_048_576,
} as const;

/** What `/readyz` needs to know: can the gate take payments, and can it judge uncertain ones. */
export interface GateReadiness {
  ready: boolean;
  facilitator: { ok: boolean; detail?: string };
  /** Per network of a paid route: whether its scheme's chain reader answers. */
  chain: Record<string, { ok: boolean; detail?: string }>;
}

/** The gate, plus what adapters and discovery need to see. */
export interface TollboothGate extends PaymentGate {
  readonly routes: RouteTable;
  readonly ledger: LedgerStore;
  /** The background reconciler (started with the gate unless `reconcileIntervalMs` is 0). */
  readonly reconciler: LedgerReconciler;
  /** Asks the facilitator (`/supported`) and each paid network's chain reader whether they answer. */
  readiness(): Promise<GateReadiness>;
  /** Stops the reconciler and the lease renewals (the store is the caller's to close). */
  close(): Promise<void>;
  /**
   * Whether `handle` could answer anything but `pass` for this method and request target
   * (origin-form or absolute). Synchronous, so an adapter lets free routes and preflights
   * through without a promise: the gate costs them one route-table lookup.
   */
  isPaid(method: string, target: string): boolean;
}
