// The edge: what the rate limits in front of the gate ask of a request (is it paid, which
// resource's own limit counts it), from the resources' publications and the gate's own match.
import type { TollboothGate } from '@tollbooth/core';
import { toolRouteKey } from '@tollbooth/mcp';
import { isMcpPost, mcpEdgeRequest } from '../http/mcp-edge';
import type { Edge, EdgeRequest } from '../http/types';
import { isPaid as isPaidResource, type ResourceEnvironment } from './kit';
import { type PricePattern, type Publication, patternCovers } from './publish';
import { toolNameOf } from './tool-name';

/** What the edge needs: the gate, and the resources' publications and deployment. */
export interface EdgeOptions {
  gate: Pick<TollboothGate, 'isPaid' | 'routes'>;
  publications: readonly Publication[];
  env: ResourceEnvironment;
  /**
   * The price patterns (`/api/v1/ai/*`): a path under one that no resource serves is paid at the
   * pattern's price and counted under the own limit of the resources the pattern covers.
   */
  patterns?: readonly Pick<PricePattern, 'path'>[];
}

/**
 * What the rate limits in front of the gate ask: a request is "paid" when the gate says so
 * (`TollboothGate.isPaid`, its own route match, so encodings and dot segments cannot dodge the
 * limit), and the name of a resource's own limit. A paid resource's precondition and input
 * validation are the gate's route precondition (`buildRoutesConfig`), after its own match.
 */
export function createEdge(options: EdgeOptions): Edge {
  const { env, gate } = options;
  const paidLimits = new Map<string, string>();
  const ownLimits = new Map<string, string>();
  for (const { resource, key, availability } of options.publications) {
    if (resource.rateLimit && availability === 'active') {
      const name = resource.rateLimit(env.config).name;
      if (isPaidResource(resource)) {
        paidLimits.set(key, name);
        // Its tool's route, matched for a tools/call (resolve below).
        paidLimits.set(toolRouteKey(toolNameOf(resource)), name);
      } else ownLimits.set(`${resource.method} ${resource.path}`, name);
      // Any other path under a price pattern covering it falls under the same limit (its route
      // key is the pattern): `/api/v1/ai/anything` is counted with the AI routes.
      for (const pattern of options.patterns ?? []) {
        if (
          isPaidResource(resource) &&
          patternCovers(pattern.path, resource.path) &&
          !paidLimits.has(pattern.path)
        )
          paidLimits.set(pattern.path, name);
      }
    }
  }
  const isPaid = (request: EdgeRequest) => gate.isPaid(request.method, request.target);
  return {
    isPaid,
    resolve: (request, readBody) => (isMcpPost(request) ? mcpEdgeRequest(request, readBody) : request),
    ownLimit(request) {
      if (isPaid(request)) {
        if (paidLimits.size === 0) return undefined;
        // A paid resource's own limit applies before any challenge: its route is the gate's match.
        const matched = gate.routes.match(request.method.toUpperCase(), request.target);
        return matched?.route.availability === 'active' ? paidLimits.get(matched.route.key) : undefined;
      }
      if (ownLimits.size === 0) return undefined;
      const query = request.target.indexOf('?');
      const path = query < 0 ? request.target : request.target.slice(0, query);
      return ownLimits.get(`${request.method.toUpperCase()} ${path}`);
    },
  };
}
