/** Where the discovery documents are served, relative to the base URL. */
export interface DiscoveryPaths {
  /** Paid-resource catalog listing (the path the x402 Bazaar uses). */
  catalog: string;
  /** Payment discovery document. */
  wellKnown: string;
  /** OpenAPI 3.1 description. */
  openapi: string;
}

/** Default discovery paths. */
export const DEFAULT_DISCOVERY_PATHS: Readonly<DiscoveryPaths> = {
  catalog: '/discovery/resources',
  wellKnown: '/.well-known/x402',
  openapi: '/api/openapi.json',
};

/** Default paths merged with the given ones (`undefined` entries dropped). */
export function resolvePaths(paths: Partial<DiscoveryPaths> | undefined): DiscoveryPaths {
  const out: DiscoveryPaths = { ...DEFAULT_DISCOVERY_PATHS };
  for (const key of Object.keys(out) as (keyof DiscoveryPaths)[]) {
    const value = paths?.[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}
