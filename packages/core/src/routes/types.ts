import type { GateResponse, RequestView } from '../gate/types';
import type { Price } from '../scheme';
import type { RouteMatch } from './compile-routes';

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

/** A paid route as declared by the user, keyed by `"METHOD /path"` (`:param`, `*` wildcards). */
export interface RouteConfig {
  accepts: PaymentOption | PaymentOption[];
  description?: string;
  /** Default `application/json`. */
  mimeType?: string;
  /** Default `active`. Can be changed at run time. */
  availability?: Availability;
  /** Seconds sent in `Retry-After` while paused. Default 60. */
  retryAfterSeconds?: number;
  /** Default `after-handler`. */
  settle?: SettleOrder;
  /** Require the canonical request (400 otherwise). `true` uses the gate's `baseUrl`. */
  canonical?: boolean | CanonicalRule;
  /** Serve this route with x402 v1 (challenge in the body, v1 fields and network names). Default 2. */
  x402Version?: 1 | 2;
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
