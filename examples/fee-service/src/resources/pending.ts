import type { RouteDiscovery } from '@tollbooth/core';
import * as z from 'zod';
import { errorResult } from '../http/respond';
import { acceptsOf, type PaidResource } from './types';

/** Max timeout of the resources of seed 4.3. */
export const CATALOG_MAX_TIMEOUT_SECONDS = 300;

/** Placeholder 200 body of the resources whose body the seed does not show yet. */
export const ResourceBodySchema = z
  .object({
    data: z.record(z.string(), z.unknown()).describe('Resource payload'),
    meta: z.record(z.string(), z.unknown()).describe('Provenance of the payload'),
  })
  .describe('Resource response');

export interface PendingResourceSpec {
  method: 'GET' | 'POST';
  path: string;
  /** Atomic units of 6-decimal USDC (10000 = 0.01). */
  amount: string;
  description: string;
  discovery: Omit<RouteDiscovery, 'output'>;
}

/**
 * A listed paid resource whose handler is not implemented yet (a later issue). It is in the route
 * table, so discovery lists it and an unpaid request gets its 402 challenge. A paid request is
 * verified, then the handler answers **501 `not_implemented`**: a status ≥ 400 makes the gate
 * release the payment without settling, so nobody is ever charged for nothing.
 */
export function pendingResource(spec: PendingResourceSpec): PaidResource {
  return {
    method: spec.method,
    path: spec.path,
    route: (deps) => ({
      accepts: acceptsOf(deps.terms, spec.amount, CATALOG_MAX_TIMEOUT_SECONDS),
      description: spec.description,
      mimeType: 'application/json',
      discovery: { ...spec.discovery, output: ResourceBodySchema },
    }),
    handler: (context) =>
      errorResult({
        status: 501,
        code: 'not_implemented',
        requestId: context.requestId,
        retryable: false,
        message: `${spec.method} ${spec.path} is listed but not implemented yet; the payment was not settled`,
      }),
  };
}
