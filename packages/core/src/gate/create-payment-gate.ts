import { randomUUID } from 'node:crypto';
import { type ErrorCode, httpStatusOf, isErrorCode } from '../errors/codes';
import { TollboothConfigError } from '../errors/config-error';
import { buildErrorBody } from '../errors/error-body';
import { TollboothError } from '../errors/tollbooth-error';
import type { FacilitatorClient } from '../facilitator/types';
import { createMemoryLedgerStore } from '../ledger/memory/index';
import {
  EXPOSED_PAYMENT_HEADERS,
  SettlementLedger,
  toPaidResponse,
  toStoredResponse,
} from '../ledger/settlement-ledger';
import {
  LEDGER_ERROR_STATUS,
  type LedgerEntry,
  type LedgerResolution,
  type LedgerStore,
  type StoredResponse,
} from '../ledger/types';
import { checkPaywallOptions, createBrowserPaywall } from '../paywall/create-browser-paywall';
import type { PaywallOptions } from '../paywall/paywall-options';
import { DEFAULT_MAX_PAYMENT_HEADER_BYTES, decodePaymentHeader, encodeHeader } from '../protocol/codec';
import { PAYMENT_IDENTIFIER, readPaymentIdentifier } from '../protocol/payment-identifier';
import type {
  PaymentPayload,
  PaymentPayloadV1,
  PaymentRequirements,
  PaymentRequirementsV1,
  SettleResponse,
} from '../protocol/schemas';
import { V1_NETWORKS } from '../protocol/schemas';
import {
  type CompiledRoute,
  compileRoutes,
  type RouteMatch,
  type RouteTable,
} from '../routes/compile-routes';
import type { RoutesConfig } from '../routes/types';
import type { PaymentIdentity, SchemeServer } from '../scheme';
import { askChain } from './ask-chain';
import { mergeHeaderList } from './header-list';
import { codeForReason, findRequirement } from './match-requirements';
import { createLedgerReconciler, type LedgerReconciler } from './reconciler';
import { requestFingerprint } from './request-fingerprint';
import type {
  GateEvent,
  GateHooks,
  GateResponse,
  HandlerResponse,
  Outcome,
  PaidRequest,
  PaymentGate,
  RequestView,
  TransferEvent,
} from './types';

/** A pino-compatible logger; the gate warns and reports errors, the reconciler says what it did at info. */
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
   * What a request gets at a paid route's path with a method no paid route there serves:
   * `method-not-allowed` answers 405 with `Allow` (default); `pass` lets it through to the
   * application (when it serves other methods there for free).
   */
  otherMethods?: 'method-not-allowed' | 'pass';
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

export { EXPOSED_PAYMENT_HEADERS };

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

/** Per-payment state the gate keeps between `handle` and `finish`. */
interface PaymentContext {
  match: RouteMatch;
  route: CompiledRoute;
  scheme: SchemeServer;
  /** The payload in v2 form and the server's v2 requirement (for pre-verify and reconcile). */
  v2Payload: PaymentPayload;
  v2Requirement: PaymentRequirements;
  /** What the facilitator gets (v1 forms for a v1 route). */
  wirePayload: PaymentPayload | PaymentPayloadV1;
  wireRequirement: PaymentRequirements | PaymentRequirementsV1;
  receiptHeader: 'payment-response' | 'x-payment-response';
  requestId: string;
  entry: Pick<LedgerEntry, 'id' | 'owner'>;
  validBefore: number;
  /** Whether the scheme checked the payload's signature locally. */
  authenticated: boolean;
  endFlight: () => void;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const JSON_TYPE = 'application/json';
const V1_NAMES: Record<string, string> = Object.fromEntries(
  Object.entries(V1_NETWORKS).map(([k, v]) => [v, k]),
);
const RETRY = Symbol('retry');
/** `acquire` claimed a payment but its identifier is bound to another payment now: look again. */
const IDENTIFIER_TAKEN = Symbol('identifier-taken');

/** A payment identifier and the request it came with (`payment-identifier` extension). */
interface IdentifiedRequest {
  /** The binding's key: `<payer, lower-cased>:<identifier>`. */
  key: string;
  fingerprint: string;
  /** The uncharged payment the identifier is bound to and may be taken from. */
  replaces?: PaymentIdentity;
}

/** Most payment header texts remembered as authenticated (about 1 KiB each). */
const AUTHENTICATED_HEADERS_MAX = 4_096;
/** Largest replayed body kept in process beside its header text (at most 4,096 of them). */
const KEPT_REPLAY_MAX_BYTES = 8 * 1024;

/** A payment header text this process authenticated, and, once replayed, the settled answer. */
interface AuthenticatedHeader {
  /** The header text itself: a lookup matches only the same bytes. */
  text: string;
  identity: PaymentIdentity;
  /** A settled entry with its response, and the end of its replay window (epoch ms). */
  replay?: { entry: LedgerEntry; until: number };
}
type Retry = typeof RETRY;

/**
 * A cheap key for a payment header text: its length and 64 of its characters, evenly spread, mixed
 * FNV-1a style. The signature and the nonce (random, a fifth of an EIP-3009 header) fall among
 * them, so two payments all but never share a key; a lookup still compares the whole text. Keying
 * the table by the text itself hashed all of it (~1 KiB) on every lookup: ~1.2 µs per request,
 * measured, where this takes ~0.1.
 */
function fingerprintOf(text: string): number {
  const length = text.length;
  const step = length > 64 ? Math.floor(length / 64) : 1;
  let hash = length | 0;
  for (let i = 0; i < length; i += step) hash = Math.imul(hash ^ text.charCodeAt(i), 16_777_619);
  return hash >>> 0;
}

/** JSON with object keys sorted (stores such as Postgres jsonb do not keep key order). */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function mergeExpose(existing: string | undefined): string {
  return mergeHeaderList(existing, EXPOSED_PAYMENT_HEADERS);
}

/** The gate's own option problems (the routes are checked by `compileRoutes`). */
function checkGateOptions(options: PaymentGateOptions): string[] {
  const problems: string[] = [];
  const facilitator = options.facilitator as Partial<FacilitatorClient> | undefined;
  if (!facilitator) problems.push('facilitator is required (e.g. createHttpFacilitatorClient({ url }))');
  else if (typeof facilitator.verify !== 'function' || typeof facilitator.settle !== 'function') {
    problems.push('facilitator must have verify and settle methods (a FacilitatorClient)');
  }
  const routes = options.routes as RouteTable | undefined;
  if (
    typeof routes?.match === 'function' &&
    (!Array.isArray(options.schemes) || options.schemes.length === 0)
  ) {
    problems.push('schemes needs at least one scheme server (e.g. createExactEvmScheme())');
  }
  if (options.routes === undefined || options.routes === null) problems.push('routes is required');
  problems.push(...checkPaywallOptions(options.paywall));
  return problems;
}

/** The gate's route table; a routes config is compiled here, its problems added to the gate's. */
function compileGateRoutes(options: PaymentGateOptions, problems: string[]): RouteTable | undefined {
  if (typeof (options.routes as RouteTable | undefined)?.match === 'function')
    return options.routes as RouteTable;
  if (options.routes === undefined || options.routes === null) return undefined;
  try {
    return compileRoutes(options.routes as RoutesConfig, {
      schemes: options.schemes,
      ...(options.baseUrl === undefined ? {} : { baseUrl: options.baseUrl }),
    });
  } catch (error) {
    if (!(error instanceof TollboothConfigError)) throw error;
    problems.push(...error.problems);
    return undefined;
  }
}

/**
 * Creates the framework-neutral payment gate (`packages/core/README.md`): availability, canonical
 * rule, 402 challenges, decoding and matching of payments, scheme pre-verification, the
 * settlement ledger, verify, settle and every outcome. Adapters only translate.
 *
 * @throws TollboothError `invalid_config` listing every problem.
 * @example
 * const gate = createPaymentGate({
 *   routes: { 'GET /api/v1/fees/now': { accepts: { network: 'eip155:8453', payTo, price: '$0.001' } } },
 *   schemes: [exactEvmScheme],
 *   facilitator: createHttpFacilitatorClient({ url: 'https://x402.org/facilitator' }),
 * });
 */
export function createPaymentGate(options: PaymentGateOptions): TollboothGate {
  if (!options || typeof options !== 'object')
    throw new TollboothConfigError('payment gate options', ['options are required']);
  const problems = checkGateOptions(options);
  const settings = { ...PAYMENT_GATE_DEFAULTS };
  for (const key of Object.keys(PAYMENT_GATE_DEFAULTS) as Array<keyof typeof PAYMENT_GATE_DEFAULTS>) {
    const value = options[key];
    if (value === undefined) continue;
    if (!Number.isFinite(value) || value < 0) problems.push(`${key} must be a non-negative number`);
    else (settings as Record<string, number>)[key] = value;
  }
  const compiled = compileGateRoutes(options, problems);
  const readers = compiled ? chainReaderProblems(compiled, options.schemes) : [];
  if (options.requireChainReader) {
    for (const reader of readers)
      problems.push(`requireChainReader: ${reader}, so uncertain settlements could not be resolved`);
  }
  if (problems.length > 0 || !compiled) throw new TollboothConfigError('payment gate options', problems);
  const table: RouteTable = compiled;
  const store = options.ledger ?? createMemoryLedgerStore();
  const now = options.now ?? Date.now;
  const logger = options.logger;
  for (const problem of readers) {
    logger?.warn(
      { code: 'no_chain_reader' },
      `${problem}: a settlement whose answer is lost stays uncertain (502) until the payer's retry finds it settled or expired`,
    );
  }
  const ledger = new SettlementLedger({
    store,
    instanceId: options.instanceId ?? randomUUID().slice(0, 8),
    leaseMs: settings.leaseMs,
    retentionMs: settings.retentionMs,
    now,
    onLeaseError: (error, id) => logger?.warn({ err: error, id }, 'ledger lease renewal failed'),
  });
  const facilitator = options.facilitator;
  const hooks = options.hooks ?? {};
  const otherMethods = options.otherMethods ?? 'method-not-allowed';
  const paywall = options.paywall ? createBrowserPaywall(options.paywall) : undefined;
  const reconciler = createLedgerReconciler({
    ledger,
    schemes: options.schemes,
    intervalMs: settings.reconcileIntervalMs,
    now,
    logger,
    hooks: {
      onTransfer: (event) => hooks.onTransfer?.(event),
      onResolved: (entry, resolution) => hooks.onResolved?.(entry, resolution),
    },
  });
  reconciler.start();
  const contexts = new WeakMap<PaidRequest, PaymentContext>();
  /**
   * Payment header texts this process has authenticated, and their identity. A byte-identical
   * replay of a settled payment is answered from the ledger without decoding or recovering the
   * signature again: the same bytes were verified before. Bounded; oldest first out.
   */
  const authenticatedHeaders = new Map<number, AuthenticatedHeader>();
  const rememberHeader = (key: number, value: string, identity: PaymentIdentity) => {
    if (authenticatedHeaders.size >= AUTHENTICATED_HEADERS_MAX) {
      authenticatedHeaders.delete(authenticatedHeaders.keys().next().value as number);
    }
    // Two texts with one key: the later one takes the place (the earlier only loses the shortcut).
    authenticatedHeaders.set(key, { text: value, identity });
  };

  /**
   * The stored response for a byte-identical replay of a settled payment, if there is one. A
   * settled entry with its response never changes again (stores only purge it after its replay
   * window), so once read it is kept beside the header text and later replays skip the store.
   */
  async function replayOf(key: number, value: string, match: RouteMatch): Promise<Outcome | undefined> {
    const known = authenticatedHeaders.get(key);
    if (known === undefined || known.text !== value) return undefined;
    const kept = known.replay;
    if (kept !== undefined) {
      if (kept.entry.resource !== match.resourceUrl || now() >= kept.until) return undefined;
      return { kind: 'replay', response: kept.entry.response!, entry: kept.entry };
    }
    const entry = await store.get(known.identity).catch(() => undefined);
    if (entry?.state !== 'settled' || !entry.response) return undefined;
    const until = ledger.replayUntil(entry);
    if (entry.resource !== match.resourceUrl || now() >= until) return undefined;
    if (entry.response.body.byteLength <= KEPT_REPLAY_MAX_BYTES) {
      Object.freeze(entry.response.headers);
      known.replay = { entry, until };
    }
    return { kind: 'replay', response: entry.response, entry };
  }

  // -- responses ---------------------------------------------------------------------------

  function baseHeaders(requestId: string): Record<string, string> {
    return {
      'content-type': JSON_TYPE,
      'cache-control': 'no-store',
      'x-request-id': requestId,
      'access-control-expose-headers': EXPOSED_PAYMENT_HEADERS,
    };
  }

  function errorResponse(
    code: ErrorCode,
    requestId: string,
    message?: string,
    extraHeaders: Record<string, string> = {},
  ): GateResponse {
    // An unexpected failure may come after a settlement: retrying the exact payload is always safe
    // (never charged twice) and is how a charged payer gets the paid answer.
    const retryExactPayload =
      code === 'settlement_uncertain' ||
      code === 'payment_in_progress' ||
      code === 'paid_response_unavailable' ||
      code === 'internal_error';
    const body = buildErrorBody({ code, requestId, retryExactPayload, ...(message ? { message } : {}) });
    const status = httpStatusOf(code);
    return {
      status,
      headers: { ...baseHeaders(requestId), ...extraHeaders },
      body: Buffer.from(JSON.stringify(body), 'utf8'),
    };
  }

  function challengeResponse(
    match: RouteMatch,
    requestId: string,
    code: ErrorCode,
    extraHeaders?: Record<string, string>,
  ): GateResponse {
    const challenge = match.route.challenge(match.resourceUrl, code);
    const headers = baseHeaders(requestId);
    if (challenge.header !== undefined) headers['payment-required'] = challenge.header;
    if (extraHeaders) Object.assign(headers, extraHeaders);
    return { status: 402, headers, body: challenge.body };
  }

  function reject(
    match: RouteMatch,
    requestId: string,
    code: ErrorCode,
    message: string,
    extra?: Record<string, string>,
  ) {
    safeHook(() => hooks.onRejected?.(requestId, code, message));
    return { kind: 'respond', response: challengeResponse(match, requestId, code, extra) } as const;
  }

  function safeHook(fn: () => unknown): void {
    try {
      const result = fn();
      if (result instanceof Promise)
        result.catch((error) => logger?.warn({ err: error }, 'gate hook failed'));
    } catch (error) {
      logger?.warn({ err: error }, 'gate hook failed');
    }
  }

  function respond(response: GateResponse): Outcome {
    return { kind: 'respond', response };
  }

  // -- handle ------------------------------------------------------------------------------

  async function handle(request: RequestView): Promise<Outcome> {
    const method = request.method.toUpperCase();
    if (method === 'OPTIONS') return { kind: 'pass' };
    const match = table.match(method, request.url);
    if (!match) {
      const allow = otherMethods === 'pass' ? [] : table.methodsFor(request.url);
      if (allow.length === 0) return { kind: 'pass' };
      return respond(
        errorResponse('method_not_allowed', requestIdOf(request), `${method} is not served here`, {
          allow: allow.join(', '),
        }),
      );
    }
    const requestId = requestIdOf(request);
    const event: GateEvent = { requestId, route: match.route, resource: match.resourceUrl };
    if (hooks.onMatched) safeHook(() => hooks.onMatched?.(event));
    const outcome = await handleMatched(request, match, requestId);
    if (quiet.has(outcome)) return outcome;
    if (outcome.kind === 'proceed') {
      if (hooks.onVerified) safeHook(() => hooks.onVerified?.({ ...event, payment: outcome.payment }));
    } else if (outcome.kind === 'respond' && outcome.response.status >= 400 && hooks.onFailed) {
      const { status, body } = outcome.response;
      safeHook(() => hooks.onFailed?.({ ...event, status, code: codeOfBody(body) }));
    }
    return outcome;
  }

  /** Answers the lifecycle hooks do not report as failures: the plain challenge, a precondition's. */
  const quiet = new WeakSet<Outcome>();

  async function handleMatched(request: RequestView, match: RouteMatch, requestId: string): Promise<Outcome> {
    const route = match.route;
    // A fragment is never part of a request target (RFC 9112): refused before any challenge.
    if (request.url.includes('#')) {
      return respond(
        errorResponse('invalid_request_target', requestId, 'a request target cannot carry a #fragment'),
      );
    }

    if (route.availability === 'paused') {
      return respond(
        errorResponse('resource_paused', requestId, undefined, {
          'retry-after': String(route.retryAfterSeconds),
        }),
      );
    }
    if (route.availability === 'retired') return respond(errorResponse('resource_retired', requestId));
    if (route.canonical && !isCanonical(match, route)) {
      return respond(
        errorResponse(
          'non_canonical_request',
          requestId,
          `only the canonical URL ${route.canonical.baseUrl}${route.path} is accepted${route.canonical.allowQuery ? '' : ', without a query string'}`,
        ),
      );
    }

    const precondition = route.config.precondition;
    if (precondition) {
      let early: GateResponse | undefined;
      try {
        early = await precondition(request, match);
      } catch (error) {
        logger?.error({ err: error, requestId }, 'route precondition failed');
        return respond(errorResponse('internal_error', requestId, 'the request could not be checked'));
      }
      if (early) {
        const answered = respond(early);
        quiet.add(answered);
        return answered;
      }
    }

    const signature = request.header('payment-signature');
    const legacy = signature === undefined ? request.header('x-payment') : undefined;
    const value = signature ?? legacy;
    if (value === undefined) {
      const challenge = challengeResponse(match, requestId, 'payment_required');
      const sent = respond(paywall ? paywall.respond(request, challenge) : challenge);
      quiet.add(sent);
      if (hooks.onChallenge)
        safeHook(() => hooks.onChallenge?.({ requestId, route, resource: match.resourceUrl }));
      return sent;
    }
    const headerName = signature !== undefined ? 'payment-signature' : 'x-payment';

    try {
      return await handlePayment(match, requestId, value, headerName, request);
    } catch (error) {
      // Nothing a client sends may produce a 500; an unexpected failure answers 503 (fail closed).
      logger?.error({ err: error, requestId }, 'payment gate failed');
      return respond(errorResponse('internal_error', requestId, 'the payment could not be processed'));
    }
  }

  function requestIdOf(request: RequestView): string {
    const incomingId = request.header('x-request-id');
    return incomingId !== undefined && REQUEST_ID.test(incomingId) ? incomingId : randomUUID();
  }

  function isCanonical(match: RouteMatch, route: CompiledRoute): boolean {
    const rule = route.canonical!;
    const base = new URL(rule.baseUrl);
    const prefix = base.pathname === '/' ? '' : base.pathname.replace(/\/$/, '');
    if (match.target.rawPath !== `${prefix}${route.path}`) return false;
    if (match.target.query !== undefined && !rule.allowQuery) return false;
    // Scheme and host as the adapter saw them (behind a proxy: the framework's trust-proxy view).
    if (rule.checkOrigin !== false && match.target.origin !== undefined) {
      if (originOf(match.target.origin) !== base.origin) return false;
    }
    return true;
  }

  async function handlePayment(
    match: RouteMatch,
    requestId: string,
    value: string,
    headerName: 'payment-signature' | 'x-payment',
    request: RequestView,
  ): Promise<Outcome> {
    const route = match.route;
    const key = fingerprintOf(value);
    // With identifiers, one payload may be sent for another request (a 409): no shortcut by header.
    if (!route.paymentIdentifier) {
      const replay = await replayOf(key, value, match);
      if (replay) {
        if (replay.kind === 'replay') safeHook(() => hooks.onReplay?.(replay.entry));
        return replay;
      }
    }
    let decoded: PaymentPayload | PaymentPayloadV1;
    try {
      decoded = decodePaymentHeader(value, { maxBytes: settings.maxPaymentHeaderBytes }) as
        | PaymentPayload
        | PaymentPayloadV1;
    } catch (error) {
      if (error instanceof TollboothError) return reject(match, requestId, error.code, error.message);
      throw error;
    }
    if (decoded.x402Version !== route.x402Version) {
      return reject(
        match,
        requestId,
        'payment_version_mismatch',
        `this route takes x402 version ${route.x402Version}, the payment is version ${decoded.x402Version}`,
      );
    }
    let identifier: string | undefined;
    if (route.paymentIdentifier && decoded.x402Version === 2) {
      const reading = readPaymentIdentifier(decoded.extensions);
      if (reading.kind === 'malformed')
        return respond(errorResponse('payment_identifier_invalid', requestId, reading.message));
      if (reading.kind === 'present') identifier = reading.id;
      else if (route.paymentIdentifier.required) {
        return respond(
          errorResponse(
            'payment_identifier_invalid',
            requestId,
            `this route requires a payment identifier in extensions["${PAYMENT_IDENTIFIER}"].info.id`,
          ),
        );
      }
    }

    let v2Requirement: PaymentRequirements;
    let v2Payload: PaymentPayload;
    let wirePayload: PaymentPayload | PaymentPayloadV1;
    let wireRequirement: PaymentRequirements | PaymentRequirementsV1;
    if (decoded.x402Version === 2) {
      const found = findRequirement(route.requirements, decoded.accepted);
      if ('code' in found)
        return reject(match, requestId, found.code, 'the payment does not match the route');
      v2Requirement = found.requirement;
      v2Payload = decoded;
      wirePayload = decoded;
      wireRequirement = found.requirement;
    } else {
      const v1 = decoded;
      const bySchemes = route.requirements.filter((r) => r.scheme === v1.scheme);
      const found = bySchemes.find((r) => V1_NAMES[r.network] === v1.network);
      if (!found) {
        const code = bySchemes.length === 0 ? 'payment_scheme_mismatch' : 'payment_network_mismatch';
        return reject(match, requestId, code, 'the payment does not match the route');
      }
      v2Requirement = found;
      v2Payload = {
        x402Version: 2,
        resource: { url: match.resourceUrl },
        accepted: found,
        payload: v1.payload,
      };
      wirePayload = v1;
      const index = route.requirements.indexOf(found);
      wireRequirement = route.requirementsV1(match.resourceUrl)[index]!;
    }

    const scheme = options.schemes.find(
      (s) => s.scheme === v2Requirement.scheme && s.supportsNetwork(v2Requirement.network),
    );
    if (!scheme) return reject(match, requestId, 'payment_scheme_mismatch', 'no scheme for this payment');
    let pre: Awaited<ReturnType<SchemeServer['preVerify']>>;
    try {
      pre = await scheme.preVerify(v2Payload, v2Requirement, Math.floor(now() / 1000));
    } catch (error) {
      return reject(
        match,
        requestId,
        'payment_invalid',
        error instanceof Error ? error.message : 'the payment could not be checked',
      );
    }
    if (!pre.ok) {
      // An authentic payment outside its time window may already be in the ledger: settled (a
      // retry gets the stored response, or payment_already_used) or uncertain (the transfer may
      // have landed: reconcile). Only a payment the ledger has never seen is refused here.
      const entry = pre.known ? await store.get(pre.known.identity).catch(() => undefined) : undefined;
      if (!pre.known || !entry)
        return reject(match, requestId, codeForReason(pre.reason, 'payment_invalid'), pre.message);
      pre = { ok: true, ...pre.known };
    } else if (pre.authenticated !== false) {
      rememberHeader(key, value, pre.identity);
    }

    const ctx: Omit<PaymentContext, 'endFlight'> = {
      match,
      route,
      scheme,
      v2Payload,
      v2Requirement,
      wirePayload,
      wireRequirement,
      receiptHeader: headerName === 'x-payment' ? 'x-payment-response' : 'payment-response',
      requestId,
      entry: { id: pre.identity, owner: ledger.owner(requestId) },
      validBefore: pre.validBefore,
      authenticated: pre.authenticated !== false,
    };
    const paid: PaidRequest = {
      requestId,
      route: route.key,
      resource: match.resourceUrl,
      identity: pre.identity,
      payer: pre.payer,
      x402Version: route.x402Version,
      header: headerName,
      payload: wirePayload,
      requirements: wireRequirement,
    };
    if (identifier === undefined) return acquire(ctx, paid);
    let body: Uint8Array = new Uint8Array();
    try {
      if (request.body) body = await request.body(settings.maxIdentifiedBodyBytes);
    } catch (error) {
      if (error instanceof TollboothError)
        return respond(errorResponse(error.code, requestId, error.message));
      throw error;
    }
    const fingerprint = requestFingerprint({
      method: request.method.toUpperCase(),
      resourceUrl: match.resourceUrl,
      query: match.target.query,
      body,
    });
    return answerIdentified(ctx, paid, { key: `${pre.payer.toLowerCase()}:${identifier}`, fingerprint });
  }

  // -- ledger ------------------------------------------------------------------------------

  function acquire(base: Omit<PaymentContext, 'endFlight'>, paid: PaidRequest): Promise<Outcome> {
    return claimAndAnswer(base, paid) as Promise<Outcome>;
  }

  /**
   * Claims the payment in the ledger and answers it; with an identifier, binds the identifier to
   * the claimed payment first, or gives the claim back (`IDENTIFIER_TAKEN`) when another payment
   * holds the identifier now.
   */
  async function claimAndAnswer(
    base: Omit<PaymentContext, 'endFlight'>,
    paid: PaidRequest,
    identified?: IdentifiedRequest,
  ): Promise<Outcome | typeof IDENTIFIER_TAKEN> {
    const { match, requestId } = base;
    const id = base.entry.id;
    let attempts = 0;
    while (attempts < 8) {
      const running = ledger.flight(id);
      if (running) {
        // Single-flight: wait for this process's request with the same payment, then answer from
        // the ledger without queueing behind each other when the answer is final.
        await running;
        const entry = await store.get(id).catch(() => undefined);
        if (entry && ((entry.state === 'settled' && entry.response) || entry.state === 'rejected')) {
          const result = await fromExisting({ ...base, endFlight: () => {} }, paid, entry);
          if (result !== RETRY) return result;
        }
        continue;
      }
      attempts++;
      const end = ledger.startFlight(id);
      const endFlight = () => {
        end();
        void ledger.leases.letGo(base.entry);
      };
      const ctx: PaymentContext = { ...base, endFlight };
      let claimed: Awaited<ReturnType<LedgerStore['claim']>>;
      const fresh = ledger.newEntry({
        id,
        owner: ctx.entry.owner,
        resource: match.resourceUrl,
        route: match.route.key,
        network: ctx.v2Requirement.network,
        payer: paid.payer,
        payload: ctx.wirePayload,
        requirements: ctx.wireRequirement,
        validBefore: ctx.validBefore,
      });
      try {
        claimed = await store.claim(fresh);
      } catch (error) {
        endFlight();
        logger?.error({ err: error, requestId }, 'ledger claim failed');
        return respond(errorResponse('ledger_unavailable', requestId));
      }
      if (claimed.acquired) {
        ledger.leases.hold(ctx.entry, 'claimed');
        if (identified && !(await bindIdentifier(ctx, identified, fresh))) return IDENTIFIER_TAKEN;
        try {
          return await verifyAndProceed(ctx, paid);
        } catch (error) {
          // Only a claim that spent nothing (claimed/verified) can be released; anything later stays.
          await releaseQuietly(ctx);
          throw error;
        }
      }
      try {
        const result = await fromExisting(ctx, paid, claimed.entry);
        if (result !== RETRY) {
          // A `proceed` keeps the flight until `finish`/`release`.
          if (result.kind !== 'proceed') endFlight();
          return result;
        }
      } catch (error) {
        endFlight();
        throw error;
      }
      endFlight();
    }
    return respond(errorResponse('payment_in_progress', requestId));
  }

  // -- payment identifier (docs/payment-identifier.md) ---------------------------------------

  /**
   * Binds the identifier to a payment this request just claimed. `false` (the claim given back)
   * when another payment holds the identifier; a store failure gives the claim back and throws.
   */
  async function bindIdentifier(
    ctx: PaymentContext,
    identified: IdentifiedRequest,
    fresh: LedgerEntry,
  ): Promise<boolean> {
    let bound: Awaited<ReturnType<LedgerStore['bindIdentifier']>>;
    try {
      bound = await store.bindIdentifier(
        {
          key: identified.key,
          fingerprint: identified.fingerprint,
          entry: fresh.id,
          createdAt: fresh.createdAt,
          expiresAt: fresh.expiresAt,
        },
        identified.replaces,
      );
    } catch (error) {
      await releaseQuietly(ctx);
      throw error;
    }
    if (bound.entry === fresh.id && bound.fingerprint === identified.fingerprint) return true;
    await releaseQuietly(ctx);
    return false;
  }

  /**
   * A payment carrying an identifier. The identifier is bound to the first request it paid for:
   * the same request is answered from that payment's ledger entry — whatever payload this one is,
   * which is never verified or settled — and another request is a 409. An identifier whose payment
   * charged nothing (released, or rejected) is free again.
   */
  async function answerIdentified(
    base: Omit<PaymentContext, 'endFlight'>,
    paid: PaidRequest,
    request: IdentifiedRequest,
  ): Promise<Outcome> {
    const { requestId } = base;
    for (let attempt = 0; attempt < 8; attempt++) {
      let replaces: PaymentIdentity | undefined;
      let bound: LedgerEntry | undefined;
      try {
        const binding = await store.getIdentifier(request.key);
        if (binding) {
          const entry = await store.get(binding.entry);
          if (!entry || entry.state === 'rejected') replaces = binding.entry;
          else if (binding.fingerprint !== request.fingerprint) {
            return respond(
              errorResponse(
                'payment_identifier_conflict',
                requestId,
                'this payment identifier was used for a different request; use a new identifier',
              ),
            );
          } else bound = entry;
        }
      } catch (error) {
        logger?.error({ err: error, requestId }, 'ledger identifier lookup failed');
        return respond(errorResponse('ledger_unavailable', requestId));
      }
      if (bound) {
        const answer = await fromBoundPayment(base, paid, bound);
        if (answer !== RETRY) return answer;
        continue;
      }
      let answer: Outcome | typeof IDENTIFIER_TAKEN;
      try {
        answer = await claimAndAnswer(base, paid, replaces ? { ...request, replaces } : request);
      } catch (error) {
        logger?.error({ err: error, requestId }, 'ledger identifier binding failed');
        return respond(errorResponse('ledger_unavailable', requestId));
      }
      if (answer !== IDENTIFIER_TAKEN) return answer;
    }
    return respond(errorResponse('payment_in_progress', requestId));
  }

  /**
   * Answers the same request under the same identifier from the payment that paid for it, exactly
   * as a retry of that payment's own payload would be answered: its stored response, byte for
   * byte, or (in flight, uncertain, settled before its handler) the ledger's usual path with the
   * stored payload. The new payload is never verified nor settled.
   */
  async function fromBoundPayment(
    base: Omit<PaymentContext, 'endFlight'>,
    paid: PaidRequest,
    entry: LedgerEntry,
  ): Promise<Outcome | Retry> {
    if (!base.authenticated) {
      // Nothing proves this payload is the payer's: the facilitator must, before it gets anything.
      const verdict = await facilitator.verify(base.wirePayload, base.wireRequirement).catch(() => undefined);
      if (!verdict) return respond(errorResponse('facilitator_unavailable', base.requestId));
      if (!verdict.isValid) {
        const reason = verdict.invalidReason ?? 'invalid';
        return reject(
          base.match,
          base.requestId,
          codeForReason(reason, 'payment_verification_failed'),
          verdict.invalidMessage ?? reason,
        );
      }
    }
    if (entry.state === 'settled' && entry.response) {
      safeHook(() => hooks.onReplay?.(entry));
      return { kind: 'replay', response: entry.response, entry };
    }
    const requirement = entry.requirements as PaymentRequirements;
    const scheme = options.schemes.find(
      (s) => s.scheme === requirement.scheme && s.supportsNetwork(requirement.network),
    );
    if (!scheme) return respond(errorResponse('payment_in_progress', base.requestId));
    const running = ledger.flight(entry.id);
    if (running) {
      await running;
      return RETRY;
    }
    const original: Omit<PaymentContext, 'endFlight'> = {
      ...base,
      scheme,
      v2Payload: entry.payload as PaymentPayload,
      v2Requirement: requirement,
      wirePayload: entry.payload as PaymentPayload,
      wireRequirement: requirement,
      entry: { id: entry.id, owner: base.entry.owner },
      validBefore: entry.validBefore,
      authenticated: true,
    };
    const originalPaid: PaidRequest = {
      ...paid,
      identity: entry.id,
      payer: entry.payer ?? paid.payer,
      payload: original.wirePayload,
      requirements: original.wireRequirement,
    };
    const end = ledger.startFlight(entry.id);
    const endFlight = () => {
      end();
      void ledger.leases.letGo(original.entry);
    };
    try {
      const answer = await fromExisting({ ...original, endFlight }, originalPaid, entry);
      if (answer === RETRY || answer.kind !== 'proceed') endFlight();
      return answer;
    } catch (error) {
      endFlight();
      throw error;
    }
  }

  async function verifyAndProceed(ctx: PaymentContext, paid: PaidRequest): Promise<Outcome> {
    const { match, requestId } = ctx;
    let verdict: Awaited<ReturnType<FacilitatorClient['verify']>>;
    try {
      verdict = await facilitator.verify(ctx.wirePayload, ctx.wireRequirement);
    } catch (error) {
      await releaseQuietly(ctx);
      logger?.warn({ err: error, requestId }, 'facilitator verify failed');
      return respond(errorResponse('facilitator_unavailable', requestId));
    }
    if (!verdict.isValid) {
      await releaseQuietly(ctx);
      const reason = verdict.invalidReason ?? 'invalid';
      return reject(
        match,
        requestId,
        codeForReason(reason, 'payment_verification_failed'),
        verdict.invalidMessage ?? reason,
      );
    }
    const verified = await ledger.transition(ctx.entry, ['claimed'], { state: 'verified' });
    if (!verified) {
      ctx.endFlight();
      return respond(errorResponse('payment_in_progress', requestId));
    }
    contexts.set(paid, ctx);
    if (ctx.route.settle === 'before-handler') {
      const settled = await settleNow(ctx, undefined, ['verified']);
      if (settled.kind !== 'settled') {
        ctx.endFlight();
        return respond(settled.response);
      }
      paid.settlement = settled.receipt;
    }
    return { kind: 'proceed', payment: paid };
  }

  async function releaseQuietly(ctx: PaymentContext): Promise<void> {
    try {
      await ledger.release(ctx.entry);
    } catch (error) {
      logger?.warn({ err: error, requestId: ctx.requestId }, 'ledger release failed');
    } finally {
      ctx.endFlight();
    }
  }

  type SettleResult =
    | { kind: 'settled'; receipt: SettleResponse; response?: StoredResponse }
    | { kind: 'failed'; response: GateResponse };

  function transfer(ctx: PaymentContext, receipt: SettleResponse, via: TransferEvent['via']): void {
    safeHook(() =>
      hooks.onTransfer?.({
        id: ctx.entry.id,
        route: ctx.route.key,
        network: ctx.v2Requirement.network,
        payer: receipt.payer,
        transaction: receipt.transaction,
        via,
      }),
    );
  }

  function resolutionOf(
    found: LedgerEntry,
    action: LedgerResolution['action'],
    note?: string,
  ): LedgerResolution {
    return {
      by: 'retry',
      instance: ledger.instanceId,
      at: now(),
      from: found.resolution?.from ?? found.state,
      action,
      attempts: found.resolution?.attempts ?? 0,
      ...(note ? { note } : {}),
    };
  }

  function resolved(ctx: PaymentContext, found: LedgerEntry, resolution: LedgerResolution): void {
    safeHook(() =>
      hooks.onResolved?.(
        { id: found.id, route: found.route, network: found.network, payer: found.payer },
        resolution,
      ),
    );
    logger?.info?.(
      { requestId: ctx.requestId, id: found.id, action: resolution.action, from: resolution.from },
      'a retry resolved an uncertain payment',
    );
  }

  /**
   * Settles with the facilitator from a `settling` entry and records the result. `handler` is the
   * handler's response when it ran already (after-handler, or a re-settle); it is stored before
   * the facilitator is called so a crash loses nothing. `resolve` marks a re-settle of an
   * uncertain payment (its resolution is recorded with the outcome).
   */
  async function settleNow(
    ctx: PaymentContext,
    handler: StoredResponse | undefined,
    from: readonly LedgerEntry['state'][],
    resolve?: LedgerEntry,
  ): Promise<SettleResult> {
    const { requestId } = ctx;
    const settling = await ledger.transition(ctx.entry, from, {
      state: 'settling',
      ...(handler ? { response: handler } : {}),
    });
    if (!settling) return { kind: 'failed', response: errorResponse('payment_in_progress', requestId) };
    // Renewed while the facilitator works on it: only a dead process's settlement is taken over.
    ledger.leases.hold(ctx.entry, 'settling');

    let receipt: SettleResponse;
    try {
      receipt = await facilitator.settle(ctx.wirePayload, ctx.wireRequirement);
    } catch (error) {
      logger?.warn({ err: error, requestId }, 'facilitator settle outcome unknown');
      return uncertain(ctx, error instanceof Error ? error.message : 'settlement outcome unknown');
    }
    if (!receipt.success && receipt.errorReason !== 'settlement_pending' && resolve) {
      // The earlier attempt's transfer may have landed since reconcile looked (the facilitator then
      // answers e.g. "nonce already used"): ask the chain once more before calling it a failure.
      const onChain = await askChain(chainQuestion(ctx), now());
      if (onChain.status === 'unknown')
        return uncertain(ctx, receipt.errorMessage ?? 'settlement outcome unknown');
      if (onChain.status === 'settled') receipt = onChain.receipt;
    }
    if (!receipt.success) {
      if (receipt.errorReason === 'settlement_pending') {
        return uncertain(ctx, receipt.errorMessage ?? 'settlement pending', receipt.transaction || undefined);
      }
      const reason = receipt.errorReason ?? 'settlement_failed';
      const code = codeForReason(reason, 'payment_settlement_failed');
      const response = challengeResponse(ctx.match, requestId, code, {
        [ctx.receiptHeader]: encodeHeader(receipt),
      });
      await recordQuietly(ctx, ['settling'], {
        state: 'rejected',
        receipt,
        response,
        error: { code, message: receipt.errorMessage ?? reason },
      });
      safeHook(() => hooks.onRejected?.(requestId, code, reason));
      return { kind: 'failed', response };
    }
    // The chain, not the facilitator's word, says the payment was settled (when the scheme reads it).
    const confirmed = await confirmOnChain(ctx, receipt);
    if (typeof confirmed === 'string') return uncertain(ctx, confirmed, receipt.transaction || undefined);
    receipt = confirmed;
    const final = handler ? toPaidResponse(handler, ctx.receiptHeader, receipt) : undefined;
    const resolution = resolve
      ? resolutionOf(resolve, 'settled-again', `transfer ${receipt.transaction}`)
      : undefined;
    const recorded = await recordQuietly(ctx, ['settling'], {
      state: 'settled',
      receipt,
      ...(receipt.transaction ? { transaction: receipt.transaction } : {}),
      ...(final ? { response: final } : {}),
      ...(resolution ? { resolution } : {}),
    });
    if (recorded) transfer(ctx, receipt, resolve ? 'retry' : 'request');
    if (resolve && resolution) resolved(ctx, resolve, resolution);
    return final ? { kind: 'settled', receipt, response: final } : { kind: 'settled', receipt };
  }

  /**
   * The facilitator's successful receipt once the chain shows its transfer (with the hash of the
   * transaction that used the authorization), or why the payment stays uncertain. A scheme
   * without a chain reader cannot confirm: its facilitator's word stands.
   */
  async function confirmOnChain(
    ctx: PaymentContext,
    receipt: SettleResponse,
  ): Promise<SettleResponse | string> {
    if (!ctx.scheme.confirmSettlement) return receipt;
    try {
      const answer = await ctx.scheme.confirmSettlement({
        payload: ctx.v2Payload,
        requirements: ctx.v2Requirement,
        transaction: receipt.transaction,
        now: Math.floor(now() / 1000),
      });
      if (answer.status === 'settled') return { ...receipt, transaction: answer.receipt.transaction };
      return answer.status === 'unknown'
        ? `the facilitator reported settlement in ${receipt.transaction}, not yet confirmed on chain: ${answer.message}`
        : `the facilitator reported settlement in ${receipt.transaction}, which the chain does not show`;
    } catch (error) {
      logger?.warn({ err: error, requestId: ctx.requestId }, 'confirming a settlement on chain failed');
      return `the facilitator reported settlement in ${receipt.transaction}, which could not be confirmed on chain`;
    }
  }

  function chainQuestion(ctx: PaymentContext, transaction?: string) {
    return {
      scheme: ctx.scheme,
      payload: ctx.v2Payload,
      requirements: ctx.v2Requirement,
      validBefore: ctx.validBefore,
      ...(transaction ? { transaction } : {}),
    };
  }

  async function uncertain(
    ctx: PaymentContext,
    message: string,
    transaction?: string,
  ): Promise<SettleResult> {
    // Free at once for the reconciler and for retries: nobody is settling it any more.
    await ledger.leases.letGo(ctx.entry);
    await recordQuietly(ctx, ['settling'], {
      state: 'uncertain',
      error: { code: 'settlement_uncertain', message },
      leaseUntil: 0,
      ...(transaction ? { transaction } : {}),
    });
    return { kind: 'failed', response: errorResponse('settlement_uncertain', ctx.requestId) };
  }

  async function recordQuietly(
    ctx: PaymentContext,
    from: readonly LedgerEntry['state'][],
    patch: Parameters<SettlementLedger['transition']>[2],
  ): Promise<boolean> {
    try {
      const updated = await ledger.transition(ctx.entry, from, patch);
      if (!updated)
        logger?.error({ requestId: ctx.requestId, state: patch.state }, 'ledger entry changed under us');
      return updated !== undefined;
    } catch (error) {
      logger?.error({ err: error, requestId: ctx.requestId, state: patch.state }, 'ledger update failed');
      return false;
    }
  }

  /**
   * Whether another request is working on the entry now: in flight, or settled with its handler
   * running (a route that settles first). Only while its owner keeps the lease.
   */
  function heldElsewhere(entry: LedgerEntry, ctx: PaymentContext): boolean {
    if (ledger.leaseEnded(entry) || entry.owner === ctx.entry.owner) return false;
    return ledger.isInFlight(entry) || (entry.state === 'settled' && !entry.response);
  }

  /** Answers a payment whose identity is already in the ledger. */
  async function fromExisting(
    ctx: PaymentContext,
    paid: PaidRequest,
    found: LedgerEntry,
  ): Promise<Outcome | Retry> {
    const { match, requestId } = ctx;
    let entry = found;
    const deadline = now() + settings.inFlightWaitMs;
    while (heldElsewhere(entry, ctx)) {
      if (now() >= deadline) return respond(errorResponse('payment_in_progress', requestId));
      await sleep(settings.pollIntervalMs);
      const next = await store.get(entry.id);
      if (!next) return RETRY;
      entry = next;
    }
    if (ledger.isInFlight(entry)) {
      // The owner died (or hung) past its lease: a settlement it started may have landed.
      if (entry.state === 'settling') {
        const resolution = resolutionOf(
          entry,
          'abandoned',
          `owner ${entry.owner} stopped renewing its lease`,
        );
        const taken = await store.update(
          entry.id,
          { state: ['settling'], owner: entry.owner },
          { state: 'uncertain', leaseUntil: 0, resolution },
        );
        if (taken) resolved(ctx, entry, resolution);
      } else {
        await store.remove(entry.id, { state: [entry.state], owner: entry.owner });
      }
      return RETRY;
    }

    if (entry.resource !== match.resourceUrl) {
      return reject(match, requestId, 'payment_already_used', 'this payment was made for another resource');
    }
    // A payload the scheme could not authenticate locally could be forged from the public payer
    // and nonce of a settled payment: it gets nothing from the ledger unless it is the stored one.
    if (!ctx.authenticated && canonicalJson(entry.payload) !== canonicalJson(ctx.wirePayload)) {
      return reject(match, requestId, 'payment_already_used', 'this payment identity is already in use');
    }
    switch (entry.state) {
      case 'settled': {
        // The window bounds replays of a stored answer; a payment charged before its handler ran
        // (its answer not produced yet) is served whenever its payer comes back.
        if (entry.response && now() >= ledger.replayUntil(entry)) {
          return reject(
            match,
            requestId,
            'payment_already_used',
            'the replay window of this payment has ended',
          );
        }
        if (entry.response) {
          safeHook(() => hooks.onReplay?.(entry));
          return { kind: 'replay', response: entry.response, entry };
        }
        // Settled before the handler ran, and no handler produced the paid answer yet: run it now.
        const owned = await ledger.takeOver(entry, ctx.entry.owner);
        if (!owned) return RETRY;
        ledger.leases.hold(ctx.entry, 'settled');
        paid.settlement = entry.receipt as SettleResponse;
        contexts.set(paid, ctx);
        return { kind: 'proceed', payment: paid };
      }
      case 'rejected': {
        const code =
          entry.error && isErrorCode(entry.error.code) ? entry.error.code : 'payment_settlement_failed';
        return reject(match, requestId, code, entry.error?.message ?? 'the payment was rejected');
      }
      case 'uncertain':
        return reconcile(ctx, paid, entry);
      default:
        return RETRY;
    }
  }

  /** A retry of an uncertain payment: the chain decides, and a payment it shows unsettled is settled again. */
  async function reconcile(
    ctx: PaymentContext,
    paid: PaidRequest,
    entry: LedgerEntry,
  ): Promise<Outcome | Retry> {
    const { match, requestId } = ctx;
    // A retry takes precedence over the background reconciler (whatever the lease says).
    const owned = await ledger.takeOver(entry, ctx.entry.owner);
    if (!owned) return RETRY;
    let answer = await askChain(chainQuestion(ctx, entry.transaction), now());
    if (
      answer.status === 'unknown' &&
      (!ctx.scheme.reconcile || ctx.scheme.hasChainReader?.(ctx.v2Requirement.network) === false) &&
      now() < ctx.validBefore * 1000
    ) {
      // No chain reader to ask: the facilitator is asked again. Settling an authorization again can
      // never transfer twice (its nonce is used once on chain); a transfer that landed meanwhile
      // makes the facilitator refuse, and the payment then stays uncertain.
      answer = { status: 'unsettled' };
    }

    switch (answer.status) {
      case 'settled': {
        const receipt = answer.receipt;
        const resolution = resolutionOf(entry, 'confirmed-on-chain', `transfer ${receipt.transaction}`);
        const final = entry.response ? toPaidResponse(entry.response, ctx.receiptHeader, receipt) : undefined;
        const settled = await ledger.transition(ctx.entry, ['uncertain'], {
          state: 'settled',
          receipt,
          ...(receipt.transaction ? { transaction: receipt.transaction } : {}),
          ...(final ? { response: final } : {}),
          resolution,
        });
        if (!settled) return RETRY;
        transfer(ctx, receipt, 'retry');
        resolved(ctx, entry, resolution);
        if (!final) {
          // Settled before its handler ran: the handler produces the paid answer now.
          ledger.leases.hold(ctx.entry, 'settled');
          paid.settlement = receipt;
          contexts.set(paid, ctx);
          return { kind: 'proceed', payment: paid };
        }
        return { kind: 'replay', response: final, entry: settled };
      }
      case 'expired': {
        const resolution = resolutionOf(entry, 'expired-unused', 'the authorization expired unused');
        const rejected = await recordQuietly(ctx, ['uncertain'], {
          state: 'rejected',
          error: { code: 'payment_expired', message: 'the authorization expired unused' },
          leaseUntil: 0,
          resolution,
        });
        if (rejected) resolved(ctx, entry, resolution);
        return reject(match, requestId, 'payment_expired', 'the authorization expired unused');
      }
      case 'unsettled': {
        const settled = await settleNow(ctx, entry.response, ['uncertain'], entry);
        if (settled.kind === 'failed') return respond(settled.response);
        if (settled.response) {
          const stored = await store.get(entry.id);
          return { kind: 'replay', response: settled.response, entry: stored ?? entry };
        }
        ledger.leases.hold(ctx.entry, 'settled');
        paid.settlement = settled.receipt;
        contexts.set(paid, ctx);
        return { kind: 'proceed', payment: paid };
      }
      default: {
        // The chain cannot tell yet: still uncertain, free for the next retry or the reconciler.
        await recordQuietly(ctx, ['uncertain'], {
          state: 'uncertain',
          leaseUntil: 0,
          resolution: resolutionOf(entry, 'unresolved', answer.message),
        });
        return respond(errorResponse('settlement_uncertain', requestId, answer.message));
      }
    }
  }

  // -- finish / release ----------------------------------------------------------------------

  /**
   * The answer to a payment settled before its handler, whose handler failed: the payer is told
   * the truth (charged, receipt attached, retry the exact payload for the answer) and the entry
   * stays settled without a response, free at once, so the retry runs the handler again.
   */
  async function paidButUnanswered(ctx: PaymentContext, receipt: SettleResponse): Promise<GateResponse> {
    await ledger.leases.letGo(ctx.entry);
    await recordQuietly(ctx, ['settled'], { state: 'settled', leaseUntil: 0 });
    const response = errorResponse('paid_response_unavailable', ctx.requestId, undefined, {
      [ctx.receiptHeader]: encodeHeader(receipt),
    });
    return response;
  }

  async function finish(payment: PaidRequest, response: HandlerResponse): Promise<GateResponse> {
    const ctx = contexts.get(payment);
    const stored = () => {
      const handler = toStoredResponse(response);
      handler.headers['access-control-expose-headers'] = mergeExpose(
        handler.headers['access-control-expose-headers'],
      );
      return handler;
    };
    if (!ctx) return stored();
    contexts.delete(payment);
    try {
      // Inside the try: a handler answer that cannot be read still ends the flight and tells a
      // payer settled before its handler that it was charged.
      const handler = stored();
      if (payment.settlement) {
        // Settled before the handler ran: only a successful answer is the paid one.
        if (handler.status >= LEDGER_ERROR_STATUS) {
          logger?.warn(
            { requestId: ctx.requestId, status: handler.status },
            'handler failed after settlement; a retry of the payload runs it again',
          );
          return failedAfter(ctx, await paidButUnanswered(ctx, payment.settlement));
        }
        const final = toPaidResponse(handler, ctx.receiptHeader, payment.settlement);
        await recordQuietly(ctx, ['settled'], { state: 'settled', response: final });
        safeHook(() => hooks.onSettled?.(payment, payment.settlement!));
        return final;
      }
      if (handler.status >= LEDGER_ERROR_STATUS) {
        await ledger.release(ctx.entry).catch((error: unknown) => {
          logger?.warn({ err: error, requestId: ctx.requestId }, 'ledger release failed');
        });
        safeHook(() => hooks.onReleased?.(payment, handler.status));
        return handler;
      }
      const settled = await settleNow(ctx, handler, ['verified']);
      if (settled.kind === 'failed') return failedAfter(ctx, settled.response);
      safeHook(() => hooks.onSettled?.(payment, settled.receipt));
      return settled.response ?? handler;
    } catch (error) {
      logger?.error({ err: error, requestId: ctx.requestId }, 'payment finish failed');
      // Settled before the handler: the payer is told so, with the receipt, and the entry is freed
      // for the retry at once; else the settlement's outcome is not known here. Never "nothing
      // was charged".
      if (!payment.settlement) return failedAfter(ctx, errorResponse('settlement_uncertain', ctx.requestId));
      return failedAfter(
        ctx,
        await paidButUnanswered(ctx, payment.settlement).catch(() =>
          errorResponse('paid_response_unavailable', ctx.requestId, undefined, {
            [ctx.receiptHeader]: encodeHeader(payment.settlement!),
          }),
        ),
      );
    } finally {
      ctx.endFlight();
    }
  }

  /** Reports a payment that failed after its handler ran (`onFailed`), and returns the answer. */
  function failedAfter(ctx: PaymentContext, response: GateResponse): GateResponse {
    if (hooks.onFailed) {
      const event = { requestId: ctx.requestId, route: ctx.route, resource: ctx.match.resourceUrl };
      safeHook(() =>
        hooks.onFailed?.({ ...event, status: response.status, code: codeOfBody(response.body) }),
      );
    }
    return response;
  }

  async function release(payment: PaidRequest): Promise<void> {
    const ctx = contexts.get(payment);
    if (!ctx) return;
    contexts.delete(payment);
    if (payment.settlement) {
      // The handler threw after settlement: the next retry runs it again, at once.
      try {
        await paidButUnanswered(ctx, payment.settlement);
      } finally {
        ctx.endFlight();
      }
      return;
    }
    await releaseQuietly(ctx);
    safeHook(() => hooks.onReleased?.(payment, undefined));
  }

  const isPaid = (method: string, target: string) => {
    const upper = method.toUpperCase();
    if (upper === 'OPTIONS') return false;
    if (table.match(upper, target) !== undefined) return true;
    return otherMethods !== 'pass' && table.methodsFor(target).length > 0;
  };

  const networks = [...new Set(table.routes.flatMap((route) => route.requirements.map((r) => r.network)))];
  async function readiness(): Promise<GateReadiness> {
    const detail = (error: unknown) => (error instanceof Error ? error.message : String(error));
    const [facilitatorCheck, ...chainChecks] = await Promise.all([
      facilitator.supported().then(
        () => ({ ok: true }),
        (error: unknown) => ({ ok: false, detail: detail(error) }),
      ),
      ...networks.map(async (network) => {
        const scheme = options.schemes.find((s) => s.supportsNetwork(network));
        if (!scheme?.chainStatus) return { ok: false, detail: `no chain reader for ${network}` };
        return scheme.chainStatus(network).then(
          (status) => (status.ok ? { ok: true } : { ok: false, detail: status.message }),
          (error: unknown) => ({ ok: false, detail: detail(error) }),
        );
      }),
    ]);
    const chain = Object.fromEntries(networks.map((network, i) => [network, chainChecks[i]!]));
    const ready = facilitatorCheck!.ok && Object.values(chain).every((check) => check.ok);
    return { ready, facilitator: facilitatorCheck!, chain };
  }

  async function close(): Promise<void> {
    reconciler.stop();
    ledger.leases.stop();
  }

  return { handle, finish, release, isPaid, routes: table, ledger: store, reconciler, readiness, close };
}

/**
 * The networks of paid routes whose scheme has no chain reader (`reconcile`): there, an uncertain
 * settlement can only be resolved by the payer's retry finding it, never by the chain.
 */
function chainReaderProblems(table: RouteTable, schemes: readonly SchemeServer[]): string[] {
  const problems = new Set<string>();
  for (const route of table.routes) {
    for (const requirement of route.requirements) {
      const scheme = schemes.find(
        (s) => s.scheme === requirement.scheme && s.supportsNetwork(requirement.network),
      );
      if (scheme && (!scheme.reconcile || scheme.hasChainReader?.(requirement.network) === false))
        problems.add(`${requirement.network} (scheme ${requirement.scheme}) has no chain reader`);
    }
  }
  return [...problems];
}

/** `scheme://host[:port]` in URL's canonical form (default ports dropped), or '' when unparsable. */
/** The code of an answer's body: the Error body's `error.code`, or a 402 body's `error`. */
function codeOfBody(body: Uint8Array): string | undefined {
  try {
    const parsed = JSON.parse(Buffer.from(body).toString('utf8')) as { error?: unknown };
    const error = parsed?.error;
    if (typeof error === 'string') return error;
    if (error && typeof error === 'object' && typeof (error as { code?: unknown }).code === 'string')
      return (error as { code: string }).code;
  } catch {
    // Not JSON: no code.
  }
  return undefined;
}

function originOf(origin: string): string {
  try {
    return new URL(origin).origin;
  } catch {
    return '';
  }
}
