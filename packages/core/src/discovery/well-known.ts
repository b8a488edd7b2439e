import { TollboothError } from '../errors/tollbooth-error';
import { resolveBaseUrl } from './catalog';
import { memoByTable } from './memo';
import { type DiscoveryPaths, resolvePaths } from './paths';
import {
  availabilityOf,
  currentTable,
  type DiscoverableRoute,
  type DiscoverableTable,
  isListed,
  joinUrl,
  patternCovers,
  type RouteFacts,
  routeFacts,
  routesInOrder,
  type TableSource,
} from './route-view';

/** One entry of `paidEndpoints`: a price pattern or an exact paid path, with its resources. */
export interface PaidEndpoint {
  /** Path pattern (`/api/v1/ai/*`) or exact path (`/api/v1/broadcast`, `/tx/{txid}`). */
  pattern: string;
  /** Upper-case method, or `*` for any. */
  method: string;
  /** Decimal USD string, e.g. `'0.01'` (empty when the price is in an asset of unknown USD value). */
  priceUsd: string;
  description: string;
  /** Full URLs of the listed paid resources under this pattern (none for a pattern without any). */
  resources: string[];
}

/** The payment discovery document served at `/.well-known/x402` (`docs/discovery.md#the-payment-discovery-document`). */
export interface WellKnownDocument {
  x402: true;
  x402Version: 2;
  protocol: string;
  scheme: string;
  network: string;
  asset: string;
  payTo: string;
  seller: { origin: string; wellKnown: string; openapi: string };
  facilitator: { url: string };
  headers: {
    paymentRequired: 'PAYMENT-REQUIRED';
    paymentSignature: 'PAYMENT-SIGNATURE';
    paymentResponse: 'PAYMENT-RESPONSE';
  };
  legacy: { paymentHeader: 'X-PAYMENT'; accepted: boolean };
  paidEndpoints: PaidEndpoint[];
  /** Full URLs of the paid resources that can be bought now (never patterns). */
  resources: string[];
  freeEndpoints: string;
  howItWorks: string[];
  tryIt: string;
  demo: string;
  docs: string;
  sdk: string;
}

/** Defaults of the free-text fields of the document. */
export const WELL_KNOWN_DEFAULTS = {
  protocol: 'https://x402.org',
  freeEndpoints:
    'Every endpoint not listed in paidEndpoints is free: it needs no x402 payment, no wallet and no authentication.',
  howItWorks: [
    '1. Request a paid endpoint without payment: the 402 response carries the x402 v2 payment requirements, base64-encoded, in the PAYMENT-REQUIRED header (and as the JSON body).',
    '2. Sign a payment for one of the accepted requirements and repeat the same request with it in the PAYMENT-SIGNATURE header (the legacy X-PAYMENT header is also accepted).',
    '3. Receive the resource with a PAYMENT-RESPONSE header holding the base64-encoded settlement receipt; after a 502 (outcome uncertain) retry only the exact same payment payload.',
  ],
  sdk: 'Any x402 v2 client: @tollbooth/fetch (and its tollbooth-pay command) or the official @x402/fetch.',
} as const;

export interface WellKnownOptions {
  /** The route table that drives the gate, or a function returning the current one. */
  table: TableSource;
  /** Public base URL. Default: the table's `baseUrl`. */
  baseUrl?: string;
  /** The facilitator that settles payments. */
  facilitatorUrl: string;
  /** Where the documents are served (for `seller.wellKnown` and `seller.openapi`). */
  paths?: Partial<DiscoveryPaths>;
  /** Default `https://x402.org`. */
  protocol?: string;
  /** Whether `X-PAYMENT` is accepted. Default `true` (the gate accepts it). */
  legacyAccepted?: boolean;
  freeEndpoints?: string;
  /** Three numbered steps. */
  howItWorks?: string[];
  /** Default: a `curl -i` of the first paid resource that needs no input (it answers 402). */
  tryIt?: string;
  /**
   * Default: a `tollbooth-pay` command paying that resource, with its package named: a bare
   * command name would be looked up on the registry where it is not installed.
   */
  demo?: string;
  /** Default: the OpenAPI URL. */
  docs?: string;
  sdk?: string;
  /** Known USD stablecoins (address → decimals) for `priceUsd` of explicit asset prices. */
  usdAssets?: Readonly<Record<string, number>>;
}

/** The well-known document of a table, cached until a route's price or availability changes. */
export interface WellKnownSource {
  document(): WellKnownDocument;
  invalidate(): void;
}

function takesNoInput(facts: RouteFacts): boolean {
  return !facts.pathParams && !facts.queryParams && facts.body === undefined;
}

function covers(pattern: DiscoverableRoute, facts: RouteFacts): boolean {
  return (
    (pattern.method === '*' || pattern.method === facts.method) && patternCovers(pattern.path, facts.path)
  );
}

/**
 * Builds the payment discovery document of a table. Active concrete routes are the `resources`;
 * `paidEndpoints` has one entry per active price pattern (with the resources it covers at the same
 * price) and one per active concrete route that no pattern covers. The top-level `scheme`,
 * `network`, `asset` and `payTo` are those of the first active route's first requirement.
 *
 * @throws TollboothError `invalid_config` when no route is active (nothing to pay for).
 */
export function buildWellKnownDocument(
  table: DiscoverableTable,
  options: WellKnownOptions & { baseUrl: string },
): WellKnownDocument {
  table = currentTable(table);
  const paths = resolvePaths(options.paths);
  const { baseUrl } = options;
  const factsOptions = { baseUrl, usdAssets: options.usdAssets };
  const active = routesInOrder(table).filter((route) => availabilityOf(route) === 'active');
  const concrete = active
    .filter((route) => !route.isPattern && isListed(route))
    .map((route) => routeFacts(route, factsOptions));
  // Patterns by specificity (table order), so a resource lands under the most specific one.
  const patterns = table.routes.filter((route) => route.isPattern && availabilityOf(route) === 'active');

  const entries = new Map<DiscoverableRoute, PaidEndpoint>();
  const placed = new Map<RouteFacts, DiscoverableRoute>();
  for (const facts of concrete) {
    const pattern = patterns.find(
      (p) => covers(p, facts) && routeFacts(p, factsOptions).priceUsd === facts.priceUsd,
    );
    if (pattern) placed.set(facts, pattern);
  }
  const paidEndpoints: PaidEndpoint[] = [];
  for (const route of active) {
    if (route.isPattern) {
      const facts = routeFacts(route, factsOptions);
      const entry: PaidEndpoint = {
        pattern: route.path,
        method: facts.method,
        priceUsd: facts.priceUsd ?? '',
        description: facts.description,
        resources: concrete.filter((c) => placed.get(c) === route).map((c) => c.resource),
      };
      entries.set(route, entry);
      paidEndpoints.push(entry);
    } else {
      const facts = concrete.find((c) => c.route === route);
      // An unlisted route has no entry of its own (its price pattern, if any, is listed above).
      if (!facts || placed.has(facts)) continue;
      paidEndpoints.push({
        pattern: facts.templatePath,
        method: facts.method,
        priceUsd: facts.priceUsd ?? '',
        description: facts.description,
        resources: [facts.resource],
      });
    }
  }

  const first = active.find((route) => !route.isPattern) ?? active[0];
  const requirement = first?.requirements[0];
  if (!requirement) {
    throw new TollboothError('invalid_config', 'well-known document: no active paid route to describe');
  }
  const sample = concrete.find((c) => c.method === 'GET' && takesNoInput(c)) ?? concrete[0];
  const sampleUrl = sample?.resource ?? joinUrl(baseUrl, '/');
  const openapiUrl = joinUrl(baseUrl, paths.openapi);

  return {
    x402: true,
    x402Version: 2,
    protocol: options.protocol ?? WELL_KNOWN_DEFAULTS.protocol,
    scheme: requirement.scheme,
    network: requirement.network,
    asset: requirement.asset,
    payTo: requirement.payTo,
    seller: {
      origin: new URL(baseUrl).origin,
      wellKnown: joinUrl(baseUrl, paths.wellKnown),
      openapi: openapiUrl,
    },
    facilitator: { url: options.facilitatorUrl },
    headers: {
      paymentRequired: 'PAYMENT-REQUIRED',
      paymentSignature: 'PAYMENT-SIGNATURE',
      paymentResponse: 'PAYMENT-RESPONSE',
    },
    legacy: { paymentHeader: 'X-PAYMENT', accepted: options.legacyAccepted ?? true },
    paidEndpoints,
    resources: concrete.map((c) => c.resource),
    freeEndpoints: options.freeEndpoints ?? WELL_KNOWN_DEFAULTS.freeEndpoints,
    howItWorks: [...(options.howItWorks ?? WELL_KNOWN_DEFAULTS.howItWorks)],
    tryIt:
      options.tryIt ??
      `curl -i ${sample?.method === 'GET' ? '' : `-X ${sample?.method ?? 'GET'} `}${sampleUrl}`,
    demo: options.demo ?? `npx --package=@tollbooth/fetch tollbooth-pay ${sampleUrl}`,
    docs: options.docs ?? openapiUrl,
    sdk: options.sdk ?? WELL_KNOWN_DEFAULTS.sdk,
  };
}

/**
 * The payment discovery document (`docs/discovery.md#the-payment-discovery-document`), built from
 * the route table once and
 * rebuilt when a route's price or availability changes.
 *
 * @throws TollboothError `invalid_config` for a missing base URL or facilitator URL, or
 *   `howItWorks` that is not three steps.
 * @example
 * const wellKnown = createWellKnownDocument({ table, facilitatorUrl: 'https://x402.org/facilitator' });
 * wellKnown.document().resources; // full URLs of the paid resources
 */
export function createWellKnownDocument(options: WellKnownOptions): WellKnownSource {
  const problems: string[] = [];
  if (typeof options.facilitatorUrl !== 'string' || options.facilitatorUrl === '') {
    problems.push('facilitatorUrl must be a URL');
  }
  if (
    options.howItWorks !== undefined &&
    (!Array.isArray(options.howItWorks) || options.howItWorks.length !== 3)
  ) {
    problems.push('howItWorks must be three numbered steps');
  }
  const baseUrl = resolveBaseUrl('createWellKnownDocument', options.table, options.baseUrl, problems);
  const memo = memoByTable(options.table, (table) => buildWellKnownDocument(table, { ...options, baseUrl }));
  return { document: () => memo.get(), invalidate: () => memo.invalidate() };
}
