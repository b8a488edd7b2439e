import { TollboothConfigError } from '../errors/config-error';
import type { SupportedResponse } from '../protocol/schemas';
import type { RouteTable } from '../routes/types';
import type { FacilitatorCallOptions, FacilitatorClient } from './types';

/** A payment kind a server challenges for: the facilitator must verify and settle it. */
export interface PaymentKind {
  scheme: string;
  /** CAIP-2 network, e.g. `eip155:8453`. */
  network: string;
  /** Protocol version of the challenges. Default 2. */
  x402Version?: 1 | 2;
}

export interface CheckFacilitatorSupportOptions extends FacilitatorCallOptions {
  facilitator: FacilitatorClient;
  /** The kinds to check; or give `routes`. */
  kinds?: readonly PaymentKind[];
  /** A route table (`gate.routes`): every kind its routes challenge for, retired routes aside. */
  routes?: RouteTable;
  /** Named in the problems, e.g. the facilitator's URL. */
  name?: string;
}

/** The kinds a route table challenges for, one of each (retired routes are never sold). */
export function paymentKindsOf(routes: RouteTable): PaymentKind[] {
  const kinds = new Map<string, PaymentKind>();
  for (const route of routes.routes) {
    if (route.availability === 'retired') continue;
    for (const requirement of route.requirements) {
      const kind = {
        scheme: requirement.scheme,
        network: requirement.network,
        x402Version: route.x402Version,
      };
      kinds.set(`${kind.x402Version} ${kind.scheme} ${kind.network}`, kind);
    }
  }
  return [...kinds.values()];
}

const describe = (kind: { scheme: string; network: string; x402Version?: number }) =>
  `${kind.scheme} on ${kind.network} (x402 v${kind.x402Version ?? 2})`;

/**
 * Asks the facilitator's `/supported` whether it verifies and settles every kind a server is
 * about to challenge for, so a server never sells what nobody can settle. Call it once at start,
 * after creating the gate: `await checkFacilitatorSupport({ facilitator, routes: gate.routes })`.
 *
 * A facilitator that answers without a kind is a configuration to fix: it throws a
 * `TollboothConfigError` listing every missing kind and what the facilitator does support. A
 * facilitator that does not answer (timeout, network, 5xx) throws its `FacilitatorError`
 * unchanged: the caller decides whether a transient failure stops the start or only warns (the
 * gate's readiness keeps reporting the facilitator as down until it answers).
 *
 * @returns the facilitator's answer
 * @throws TollboothConfigError when a kind is not supported
 * @throws FacilitatorError when `/supported` gives no answer
 * @example
 * await checkFacilitatorSupport({ facilitator, routes: gate.routes, name: facilitator.url });
 */
export async function checkFacilitatorSupport(
  options: CheckFacilitatorSupportOptions,
): Promise<SupportedResponse> {
  const { facilitator, name = 'the facilitator' } = options;
  const kinds = [...(options.kinds ?? []), ...(options.routes ? paymentKindsOf(options.routes) : [])];
  const supported = await facilitator.supported(options.signal ? { signal: options.signal } : {});
  const problems: string[] = [];
  for (const kind of kinds) {
    const version = kind.x402Version ?? 2;
    const found = supported.kinds.some(
      (k) => k.x402Version === version && k.scheme === kind.scheme && k.network === kind.network,
    );
    if (!found) problems.push(`${name} does not support ${describe(kind)}`);
  }
  if (problems.length > 0) {
    const offered = supported.kinds.map(describe);
    problems.push(
      offered.length > 0
        ? `${name} supports: ${offered.join(', ')}`
        : `${name} lists no supported kinds at all`,
    );
    throw new TollboothConfigError('facilitator for these payments', problems);
  }
  return supported;
}
