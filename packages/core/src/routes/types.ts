import type { GateResponse, RequestView } from '../http/types';
import type { PaymentRequirements, PaymentRequirementsV1 } from '../protocol/schemas';
import type { Price } from '../scheme';
import type { CompiledSignIn } from '../sign-in/compile-sign-in';
import type { SignInPolicy } from '../sign-in/types';
import type { Challenge } from './build-challenge';
import type { NormalizedTarget } from './normalize-path';

/** Whether a paid resource can be bought now. `paused` → 503, no challenge; `retired` → 410. */
export type Availability = 'active' | 'paused' | 'retired';

/** When settlement happens relative to the handler. */
export type SettleOrder = 'after-handler' | 'before-handler';

/** One way to pay for a route. A route may accept several (networks, assets). */
export interface PaymentOption {
  /** Default `exact`. */
  scheme?: string;
  /** CAIP-2 network, e.g. `eip155:8453`. */
  network: string;
  /** Recipient address. */
  payTo: string;
  /** `"$0.001"`, `0.001` (USD, the scheme picks its asset) or `{ amount, asset, extra }`. */
  price: Price;
  /** Default 60. */
  maxTimeoutSeconds?: number;
  /** Merged over the scheme's own `extra` (e.g. the EIP-712 domain). */
  extra?: Record<string, unknown>;
}

/**
 * Canonical-request rule: the request must be exactly `baseUrl + path` (same scheme and host as
 * `baseUrl` unless `checkOrigin: false`), with no query string unless `allowQuery`. Anything else
 * answers 400.
 */
export interface CanonicalRule {
  baseUrl: string;
  allowQuery?: boolean;
  /**
   * Also require the request's scheme and host to be those of `baseUrl`. Default true. Behind a
   * TLS-terminating proxy, let the framework trust the proxy (`app.set('trust proxy', …)`,
   * Fastify `trustProxy`, Koa `app.proxy`) so the adapter sees the forwarded scheme and host.
   */
  checkOrigin?: boolean;
}

/**
 * A paid route as declared by the user, keyed by `"METHOD /path"` (`:param`, `*` wildcards), or a
 * paid MCP tool keyed by `"TOOL /<tool name>"` (`@tollbooth/mcp`, docs/mcp.md#one-gate-one-ledger):
 * tool routes are matched only by tool calls, never by an HTTP request, and discovery leaves them out.
 */
export interface RouteConfig {
  accepts: PaymentOption | PaymentOption[];
  /**
   * The resource URL of the route instead of `baseUrl` + path (exact paths only): what challenges
   * name in `resource.url`. A tool route's default is `mcp://tool/<tool name>`.
   */
  resource?: string;
  description?: string;
  /** Default `application/json`. */
  mimeType?: string;
  /** Default `active`. Can be changed at run time. */
  availability?: Availability;
  /** Seconds sent in `Retry-After` while paused. Default 60. */
  retryAfterSeconds?: number;
  /** Default `after-handler`. */
  settle?: SettleOrder;
  /**
   * Hold the payer's balance for a verified payment before the handler runs, on a route that
   * settles after it and whose handler acts or costs (a broadcast, a model call): the verified but
   * unsettled payments of one payer in one asset never exceed the balance the chain reader reports,
   * across every instance sharing the ledger store, and one that would is refused with 402
   * `payment_balance_reserved` before the handler. Needs a store with reservations (the built-in
   * ones) and a scheme that reads balances (a chain reader); on a network without a reader the
   * route runs unreserved, and the gate says so at start (docs/ledger.md#one-balance-one-side-effect).
   * Default false.
   */
  reserveBalance?: boolean;
  /** Require the canonical request (400 otherwise). `true` uses the gate's `baseUrl`. */
  canonical?: boolean | CanonicalRule;
  /** Serve this route with x402 v1 (challenge in the body, v1 fields and network names). Default 2. */
  x402Version?: 1 | 2;
  /**
   * A v2 route that also takes x402 v1 payments (verified and settled in their v1 form, receipt in
   * `X-PAYMENT-RESPONSE`); its challenge stays v2. For MCP tools paid by v1 clients
   * (docs/mcp.md#vercel-x402-mcp). Default false: a v1 payment answers `payment_version_mismatch`.
   */
  acceptV1Payments?: boolean;
  /** Extensions added to the challenge (e.g. `bazaar`), in the 402 body and, unless overridden, the header. */
  extensions?: Record<string, unknown>;
  /**
   * Extensions as the `PAYMENT-REQUIRED` header carries them, by name, over `extensions`: a
   * lighter form of one too big for a response head (proxies answer 502 past 4–8 KB of head;
   * `addBazaarExtensions` puts the bazaar extension here without its output schema). The 402 body
   * keeps `extensions` whole. Clients read the header, so this is what they echo when paying.
   */
  headerExtensions?: Record<string, unknown>;
  /**
   * Speak the `payment-identifier` extension (x402 v2 routes only): the challenge advertises it,
   * and a payment carrying an identifier is bound to the request (method, canonical URL, body).
   * The same identifier on the same request gets the stored response again without a second
   * charge, even with a newly signed payment; on another request it answers 409
   * `payment_identifier_conflict`. `{ required: true }` refuses payments without one (400).
   * Default false (docs/payment-identifier.md).
   */
  paymentIdentifier?: boolean | { required?: boolean };
  /**
   * Sign-in-with-x (docs/sign-in-with-x.md): a payment for this route buys the payer a pass
   * (`passSeconds`), a number of uses, or both; within it the payer comes back with a signed
   * `SIGN-IN-WITH-X` proof instead of paying. Needs the gate's `signIn` option and `baseUrl`.
   * Default none.
   */
  signIn?: SignInPolicy;
  /** Discovery metadata (catalog, OpenAPI, bazaar): filled by `@tollbooth/core` discovery. */
  discovery?: RouteDiscovery;
  /**
   * Asked once the request matched this route (active, canonical) and before any challenge or
   * payment work: a response is sent as it is, so nobody signs for a request that cannot succeed
   * (no data to serve, input the resource refuses); `undefined` goes on. A throw answers 503
   * `internal_error`.
   */
  precondition?(
    request: RequestView,
    match: RouteMatch,
  ): GateResponse | undefined | Promise<GateResponse | undefined>;
}

/** Discovery metadata of a paid route; the input/output schemas are zod schemas. */
export interface RouteDiscovery {
  category?: string;
  keywords?: string[];
  operationId?: string;
  /**
   * Default true. An unlisted route is sold and described in OpenAPI like any other, but left out
   * of the catalog and of the well-known document's `resources` (a price pattern covering it stays
   * listed): for a contract that prices a path without listing it.
   */
  listed?: boolean;
  /** zod schemas of the request parts and the 200 body. */
  input?: {
    pathParams?: unknown;
    queryParams?: unknown;
    body?: unknown;
  };
  output?: unknown;
}

/** `{"GET /api/v1/fees/now": {...}, "GET /api/v1/ai/*": {...}}` */
export type RoutesConfig = Record<string, RouteConfig>;

/** One paid route, compiled. */
export interface CompiledRoute {
  /** The key as declared, e.g. `GET /api/v1/ai/explain/transaction/:txid`. */
  readonly key: string;
  /** Upper-case method, or `*` for any. */
  readonly method: string;
  /** The declared path pattern, e.g. `/api/v1/ai/*`. */
  readonly path: string;
  /** Whether the path has a `*` wildcard (a price pattern). */
  readonly isPattern: boolean;
  /** Names of the `:params`, in order. */
  readonly params: readonly string[];
  /** Position of the route in the declared config (the table itself is sorted by specificity). */
  readonly order: number;
  readonly config: RouteConfig;
  readonly x402Version: 1 | 2;
  readonly settle: SettleOrder;
  readonly description: string;
  readonly mimeType: string;
  readonly retryAfterSeconds: number;
  /** Current availability; change it with `RouteTable.setAvailability`. */
  readonly availability: Availability;
  /** The canonical-request rule, resolved against `baseUrl`, if the route has one. */
  readonly canonical?: Readonly<CanonicalRule>;
  /** Set when the route speaks the `payment-identifier` extension. */
  readonly paymentIdentifier?: { readonly required: boolean };
  /** Set when the route offers sign-in-with-x: its policy, origin, chains and nonces. */
  readonly signIn?: CompiledSignIn;
  /** The server's own requirements, keys in official order (scheme, network, amount, asset, payTo, maxTimeoutSeconds, extra). */
  readonly requirements: readonly PaymentRequirements[];
  /**
   * Resource URL for a request (absolute URL as received, or that URL already normalised by
   * `normalizeTarget`); without one, `baseUrl + path` (the declared pattern for routes with params
   * or wildcards).
   */
  resourceUrl(request?: string | NormalizedTarget): string;
  /** v1 requirements for a resource URL (v1 repeats the resource inside every requirement). */
  requirementsV1(resourceUrl: string): PaymentRequirementsV1[];
  /** The 402 challenge for a resource URL and error code, cached for `payment_required`. */
  challenge(resourceUrl: string, error?: string): Challenge;
}

/** A request matched to a route. */
export interface RouteMatch {
  route: CompiledRoute;
  /** Decoded, normalised path (case preserved). */
  path: string;
  /** Values of the `:params`, decoded. */
  params: Record<string, string>;
  /** The resource URL of this request. */
  resourceUrl: string;
  /** The target split as received. */
  target: NormalizedTarget;
}

/** The compiled route table: drives the gate and discovery. */
export interface RouteTable {
  /** All routes, most specific first. */
  readonly routes: readonly CompiledRoute[];
  readonly baseUrl?: string;
  /** The most specific route for a method and URL (absolute or origin-form), or `undefined` (free). */
  match(method: string, url: string): RouteMatch | undefined;
  /**
   * The methods paid routes serve at this URL, whatever the request's method (`HEAD` with `GET`),
   * most specific route first; empty when no paid route has this path. A route declared without a
   * method serves every method (`['*']`), except at a path a more specific route serves with its
   * own methods: there it serves none of the others (a price pattern does not challenge a `PUT`
   * to a `POST` route, which answers 405).
   */
  methodsFor(url: string): string[];
  get(key: string): CompiledRoute | undefined;
  /** Changes a route's availability at run time. @throws TollboothError if the key is unknown. */
  setAvailability(key: string, availability: Availability): void;
}
