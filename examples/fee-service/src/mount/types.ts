import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TollboothGate } from '@tollbooth/core';
import type { Redis } from 'ioredis';
import type { Edge, NamedRateLimit, ServiceRoute } from '../http/types';

/** Rate limit of the paid routes, applied before the payment gate. */
export interface RateLimitSettings {
  enabled: boolean;
  /** Requests per window and client address. */
  max: number;
  windowMs: number;
  /** Shared counters for several instances; default in-process memory. */
  redis?: Redis;
  /** Key prefix in Redis. */
  prefix?: string;
}

/** What every mount needs: the neutral routes, the gate, the edge and the rate limit. */
export interface MountOptions {
  routes: readonly ServiceRoute[];
  gate: TollboothGate;
  edge: Edge;
  rateLimit: RateLimitSettings;
  /**
   * Resources' own rate limits, by name (`edge.ownLimit` names the one a request falls under).
   * They share the paid limit's `enabled`, store and prefix.
   */
  ownLimits?: readonly NamedRateLimit[];
  /** Trust `X-Forwarded-*` (behind a TLS-terminating proxy). */
  trustProxy: boolean;
  /** Logs unexpected handler failures. */
  onError?: (error: unknown) => void;
}

/** A mounted application: a Node request listener the service's HTTP server calls. */
export interface MountedApp {
  listener: (req: IncomingMessage, res: ServerResponse) => void;
  close(): Promise<void>;
}
