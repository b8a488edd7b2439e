import type { PaymentOption, Price, RouteConfig } from '@tollbooth/core';
import type { createFeeSchemas } from '../domain/schemas';
import type { RouteContext, RouteResult } from '../http/types';
import type { SnapshotService } from '../snapshot/service';

/** The payment terms every paid resource shares (seed 4.2 and 4.3). */
export interface PaymentTerms {
  /** CAIP-2 network, e.g. `eip155:8453`. */
  network: string;
  /** Recipient address. */
  payTo: string;
  /** Token contract (USDC). */
  asset: string;
  /** EIP-712 domain name and version of the token. */
  assetName: string;
  assetVersion: string;
}

/** What resource handlers use. */
export interface ResourceDeps {
  snapshots: SnapshotService;
  terms: PaymentTerms;
  /** Fixed facilitator name reported in `meta.payment.facilitator`. */
  facilitatorName: string;
  /** FeePreview / FeeDecision schemas with this deployment's constants. */
  schemas: ReturnType<typeof createFeeSchemas>;
}

/** One paid resource: its route config (price, discovery) and its handler, in one module. */
export interface PaidResource {
  method: 'GET' | 'POST';
  /** Path with `:params`. */
  path: string;
  /** The gate's route config (availability is set by the profile). */
  route(deps: ResourceDeps): RouteConfig;
  handler(context: RouteContext, deps: ResourceDeps): RouteResult | Promise<RouteResult>;
  /** Runs before the gate (before any challenge); a result is answered instead. */
  precondition?(requestId: string, deps: ResourceDeps): RouteResult | undefined;
}

/** The route key of a resource, e.g. `GET /api/v1/fees/now`. */
export function routeKey(resource: Pick<PaidResource, 'method' | 'path'>): string {
  return `${resource.method} ${resource.path}`;
}

/** An explicit price in atomic units of the configured token (6-decimal USDC). */
export function priceOf(terms: PaymentTerms, amount: string): Price {
  return { amount, asset: terms.asset, extra: { name: terms.assetName, version: terms.assetVersion } };
}

/** One `exact` payment option on the configured network. */
export function acceptsOf(terms: PaymentTerms, amount: string, maxTimeoutSeconds: number): PaymentOption {
  return {
    scheme: 'exact',
    network: terms.network,
    payTo: terms.payTo,
    price: priceOf(terms, amount),
    maxTimeoutSeconds,
  };
}
