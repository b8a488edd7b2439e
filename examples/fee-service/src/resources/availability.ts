import type { Availability } from '@tollbooth/core';
import type { ServiceConfig } from '../config';
import { type AnyResource, isPaid } from './kit';

/**
 * What the availability check reads of a publication: publish.ts's `Publication`, named here by its
 * fields because publish.ts builds on this file.
 */
interface Published {
  resource: AnyResource;
  availability: Availability;
  reason?: string;
}

/**
 * The operator's word on a resource's availability (`RESOURCE_AVAILABILITY`, by path), over the
 * profile's: how the decision, published paused in the production profile as the contract shows
 * it, is sold (`/api/v1/fees/now=active`), or how any paid resource is paused or retired.
 */
export function operatorAvailability(
  resource: AnyResource,
  config: Pick<ServiceConfig, 'resourceAvailability'>,
): ServiceConfig['resourceAvailability'][string] | undefined {
  return isPaid(resource) ? config.resourceAvailability[resource.path] : undefined;
}

/**
 * What `RESOURCE_AVAILABILITY` asks that this deployment cannot do, one sentence each: a path no
 * paid resource has, or a resource made active that cannot be delivered here (a capability not
 * configured, not built yet). Empty when every request holds.
 */
export function resourceAvailabilityProblems(
  publications: readonly Published[],
  config: Pick<ServiceConfig, 'resourceAvailability'>,
): string[] {
  const problems: string[] = [];
  const paid = publications.filter((p) => isPaid(p.resource));
  for (const [path, state] of Object.entries(config.resourceAvailability)) {
    const publication = paid.find((p) => p.resource.path === path);
    if (!publication) {
      problems.push(
        `RESOURCE_AVAILABILITY: no paid resource at ${path} (the paths: ${paid.map((p) => p.resource.path).join(', ')})`,
      );
    } else if (state === 'active' && publication.availability !== 'active') {
      problems.push(
        `RESOURCE_AVAILABILITY: ${path} cannot be active here: ${publication.reason ?? 'paused'}`,
      );
    }
  }
  return problems;
}
