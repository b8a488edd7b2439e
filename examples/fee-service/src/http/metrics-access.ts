import { createHash, timingSafeEqual } from 'node:crypto';
import type { ServiceMetrics } from '../metrics';
import { errorResult, requestIdOf } from './respond';
import type { RouteContext, RouteResult } from './types';

/**
 * Who may read `/metrics` on a listener (docs/production.md#8-metrics-readiness-logs-shutdown):
 * `token` asks every scrape for `Authorization: Bearer <token>`; `elsewhere` means another listener
 * serves it (`METRICS_PORT`), so this one answers 404 as for any unknown path.
 */
export interface MetricsAccess {
  token?: string | undefined;
  elsewhere?: boolean;
}

const BEARER = /^Bearer +([\x21-\x7e]+) *$/i;
const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/**
 * Whether an `Authorization` header carries the bearer token. Both sides are hashed first, so the
 * comparison takes the same time whatever the length or the first differing byte.
 */
export function bearerMatches(authorization: string | undefined, token: string): boolean {
  const presented = authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];
  return timingSafeEqual(digest(presented ?? ''), digest(token)) && presented !== undefined;
}

/**
 * The `/metrics` handler of one listener: the Prometheus text, or 404 / 401 by its access.
 * @example metricsHandler(metrics, { token: config.metrics.token })
 */
export function metricsHandler(
  metrics: ServiceMetrics,
  access: MetricsAccess,
): (context: Pick<RouteContext, 'header'>) => Promise<RouteResult> {
  return async ({ header }) => {
    if (access.elsewhere) {
      return errorResult({
        status: 404,
        code: 'not_found',
        requestId: requestIdOf(header),
        retryable: false,
      });
    }
    if (access.token !== undefined && !bearerMatches(header('authorization'), access.token)) {
      return errorResult({
        status: 401,
        code: 'unauthorized',
        requestId: requestIdOf(header),
        retryable: false,
        message: 'the metrics need Authorization: Bearer <METRICS_TOKEN>',
        headers: { 'www-authenticate': 'Bearer realm="metrics"' },
      });
    }
    const text = await metrics.registry.metrics();
    return {
      status: 200,
      headers: { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store' },
      body: Buffer.from(text, 'utf8'),
    };
  };
}
