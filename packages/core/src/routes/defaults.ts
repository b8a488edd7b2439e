import type { Availability, SettleOrder } from './types';

/** Defaults of a route's optional settings. */
export const ROUTE_DEFAULTS = {
  scheme: 'exact',
  maxTimeoutSeconds: 60,
  mimeType: 'application/json',
  availability: 'active' as Availability,
  retryAfterSeconds: 60,
  settle: 'after-handler' as SettleOrder,
  x402Version: 2 as 1 | 2,
  /** Challenges cached per resource URL for routes whose URL varies (params, wildcards, no baseUrl). */
  challengeCacheSize: 256,
} as const;
