import type { Availability, PaidRequest, SettleOrder, SignInPolicy } from '@tollbooth/core';
import type * as z from 'zod';
import type { Capabilities, CapabilityName, CapabilitySet } from '../capabilities';
import type { Profile, ServiceConfig } from '../config';
import type { ErrorCodeSpec, ServiceErrorCode } from '../http/respond';
import type { NamedRateLimit, RouteContext, RouteResult } from '../http/types';

/**
 * The resource kit: one declaration per resource folder (`src/resources/<group>/<name>/`), listed
 * once in `src/resources/registry.ts`. The route table (with each paid route's input checks), the
 * OpenAPI document, the catalog, `/.well-known/x402` and the error-code table are all built from
 * these declarations (see `publish.ts`); nothing else lists resources. How to add one: `README.md`
 * here.
 */

/** The deployment a declaration is published into. */
export interface ResourceEnvironment {
  config: ServiceConfig;
  /** The canonical base URL resources are published under (PUBLIC_BASE_URL, else where it listens). */
  baseUrl: string;
  /** The capabilities this deployment has (absent ones are undefined). */
  capabilities: CapabilitySet;
}

/**
 * A value a declaration derives from the deployment (an output schema with its constant labels),
 * built once per environment.
 * @example output: perEnvironment((env) => feePreviewSchema(feeSchemaConstantsOf(env)))
 */
export function perEnvironment<T extends object>(build: (env: ResourceEnvironment) => T) {
  const built = new WeakMap<ResourceEnvironment, T>();
  return (env: ResourceEnvironment): T => {
    let value = built.get(env);
    if (value === undefined) {
      value = build(env);
      built.set(env, value);
    }
    return value;
  };
}

/** zod schemas of the request parts a resource takes. Use `z.strictObject`: unknown keys are refused. */
export interface ResourceInputSchemas {
  pathParams?: z.ZodType<Record<string, unknown>>;
  queryParams?: z.ZodType<Record<string, unknown>>;
  body?: z.ZodType<Record<string, unknown>>;
}

type Parsed<S> = S extends z.ZodType ? z.output<S> : Record<string, never>;

/** The request parts after validation by the resource's own schemas. */
export interface ResourceInput<I extends ResourceInputSchemas> {
  params: Parsed<I['pathParams']>;
  query: Parsed<I['queryParams']>;
  body: Parsed<I['body']>;
}

/** A refusal found by a resource's `check`: one of its declared codes and what was wrong. */
export interface ResourceRefusal<E extends string = string> {
  code: E;
  message: string;
}

/** What a handler gets. */
export interface ResourceContext<
  N extends keyof Capabilities = keyof Capabilities,
  I extends ResourceInputSchemas = ResourceInputSchemas,
  E extends string = string,
> {
  /** The framework-neutral request (headers, URL, the raw body). */
  request: RouteContext;
  requestId: string;
  /** The accepted payment (paid resources), with `settlement` when the route settles first. */
  payment: PaidRequest | undefined;
  /** The validated input (a paid route's precondition parsed it before any challenge and handed it here). */
  input: ResourceInput<I>;
  /** The capabilities the resource needs, present; the others as the deployment has them. */
  capabilities: Pick<Capabilities, N> & CapabilitySet;
  env: ResourceEnvironment;
  /**
   * The Error answer of a declared code (or a service code), with the declared status and
   * `retryable`. A status of 400 or more is never settled.
   */
  fail(code: E | ServiceErrorCode, message?: string, headers?: Record<string, string>): RouteResult;
}

export type ResourceHandler<
  N extends keyof Capabilities,
  I extends ResourceInputSchemas,
  E extends string,
> = (context: ResourceContext<N, I, E>) => RouteResult | Promise<RouteResult>;

/** One resource: everything the service publishes about it, and its handler once it is built. */
export interface ResourceDeclaration<
  N extends keyof Capabilities = keyof Capabilities,
  I extends ResourceInputSchemas = ResourceInputSchemas,
  E extends string = string,
> {
  method: 'GET' | 'POST';
  /** Path with `:name` parameters, e.g. `/api/v1/ai/explain/transaction/:txid`. */
  path: string;
  /** One line: the catalog's description and the OpenAPI summary. */
  description: string;
  /**
   * The price of a paid resource, in atomic units of the configured 6-decimal token (10000 =
   * 0.01 USDC), and the authorization's max timeout. Absent: the resource is free (no gate).
   */
  price?: { amount: string; maxTimeoutSeconds: number };
  discovery: {
    category: string;
    keywords: string[];
    operationId: string;
    /**
     * `false`: sold and described in OpenAPI, but not listed in the catalog nor in the well-known
     * `resources` (the contract prices `/api/v1/analyst*` without listing a resource URL).
     */
    listed?: false;
  };
  input?: I;
  /** zod schema of the 200 body, published in OpenAPI and the catalog's `outputSchema`. */
  output: z.ZodType | ((env: ResourceEnvironment) => z.ZodType);
  /**
   * Every error code the resource itself answers, beyond the service's and the gate's. Codes are
   * unique across the service: two resources may share one only with the same spec.
   */
  errors: { readonly [code in E]: ErrorCodeSpec };
  /**
   * Capabilities the resource cannot work without. One absent or planned: published paused, with
   * the reason in `/.well-known/x402`.
   */
  needs: readonly (N | CapabilityName)[];
  /** A finer reason the present capabilities are not enough (e.g. no dialect with a block template). */
  unavailable?(capabilities: CapabilitySet): string | undefined;
  /** Availability per profile when every need is met. Default `active` in both. */
  availability?: Partial<Record<Profile, Availability>>;
  /**
   * Offered as an MCP tool at `/mcp` too (docs/mcp.md#the-fee-service-at-mcp): every built paid
   * resource is; a free one when this is true (the preview).
   */
  tool?: true;
  /**
   * The service's free rehearsal of the payment flow (the x402 demo): while active, its URL is
   * `/.well-known/x402`'s `demo`. At most one resource is.
   */
  demo?: true;
  /**
   * Gate options of a paid route: the canonical-request rule, the settle order, whether the
   * payer's balance is reserved before the handler runs (a handler that acts or costs:
   * docs/reliability.md#one-balance-one-side-effect), and sign-in (one payment buys a pass the
   * payer comes back to by signing, docs/sign-in-with-x.md#the-fee-service).
   */
  gate?: { canonical?: boolean; settle?: SettleOrder; reserveBalance?: boolean; signIn?: SignInPolicy };
  /**
   * Checks the validated input further, before any challenge (e.g. a transaction that cannot
   * parse). Pure and fast: it runs in the route's precondition on every paid attempt.
   */
  check?(input: ResourceInput<I>, env: ResourceEnvironment): ResourceRefusal<E> | undefined;
  /** The gate asks it on an active route before any challenge; a result is answered instead (e.g. 503 with no snapshot). */
  precondition?(requestId: string, capabilities: CapabilitySet): RouteResult | undefined;
  /**
   * Whether the validated request has anything to sell — it may read data (an observatory window
   * with nothing scored has nothing): asked after `check` and before any challenge, on every paid
   * attempt; a refusal (one of the declared codes) is answered instead, so nothing is charged for
   * nothing. The handler still refuses what it finds empty after payment (a refusal is never
   * settled).
   */
  sellable?(
    input: ResourceInput<I>,
    capabilities: Pick<Capabilities, N> & CapabilitySet,
  ): Promise<ResourceRefusal<E> | undefined>;
  /** A rate limit of the resource's own, applied before anything else (after the paid one). */
  rateLimit?(config: ServiceConfig): NamedRateLimit;
  /**
   * The handler; absent while the resource is not built (it is then published paused). Its codes
   * are the declared ones (`NoInfer`: a shared handler, such as the explainers', adds none).
   */
  handler?: ResourceHandler<N, I, NoInfer<E>>;
  /** For handlers that keep state per service (caches): called once when the service starts. */
  createHandler?(env: ResourceEnvironment): ResourceHandler<N, I, NoInfer<E>>;
}

/**
 * Declares a resource with its types inferred: the handler's `capabilities` hold what `needs`
 * names, its `input` what the schemas parse to, and `fail` accepts only declared codes.
 * @example
 * export const resource = defineResource({
 *   method: 'GET', path: '/api/v1/example', description: 'An example', price: { amount: '5000', maxTimeoutSeconds: 300 },
 *   discovery: { category: 'fees', keywords: ['example'], operationId: 'getExample' },
 *   output: ExampleSchema, errors: {}, needs: ['snapshots'],
 *   handler: ({ capabilities }) => ({ status: 200, body: build(capabilities.snapshots.current()) }),
 * });
 */
export function defineResource<
  const N extends keyof Capabilities,
  const I extends ResourceInputSchemas = Record<never, never>,
  const E extends string = never,
>(declaration: ResourceDeclaration<N, I, E>): ResourceDeclaration<N, I, E> {
  return declaration;
}

/** Any declaration, as the registry lists them. */
// biome-ignore lint/suspicious/noExplicitAny: the registry holds declarations of every capability, input and code type
export type AnyResource = ResourceDeclaration<any, any, any>;

/** Whether a resource is sold through the payment gate. */
export function isPaid(resource: AnyResource): boolean {
  return resource.price !== undefined;
}

/** Whether a resource has a handler. */
export function isBuilt(resource: AnyResource): boolean {
  return resource.handler !== undefined || resource.createHandler !== undefined;
}

/** The route key of a resource, e.g. `GET /api/v1/fees/now`. */
export function routeKey(resource: Pick<AnyResource, 'method' | 'path'>): string {
  return `${resource.method} ${resource.path}`;
}
