import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServiceConfig } from '../config';
import { metricsHandler } from '../http/metrics-access';
import { errorResult, requestIdOf } from '../http/respond';
import type { RouteResult } from '../http/types';
import type { ServiceMetrics } from '../metrics';
import { encodeResult } from '../mount/shared';
import type { CleanupStack } from './cleanup';
import { listenOn } from './ports';

/**
 * `/metrics` on a listener of its own (`METRICS_PORT`, on `METRICS_HOST`, default `HOST`), for a scraper on a private
 * network while the main port faces the proxy; `METRICS_TOKEN`, when set, is asked here too. It
 * answers GET and HEAD of `/metrics` only (404 elsewhere, 405 with `Allow` for another method)
 * and is closed with the service. Resolves with its URL, e.g. `http://127.0.0.1:9464/metrics`.
 */
export async function startMetricsServer(
  config: Pick<ServiceConfig, 'host'> & { metrics: { port: number; token: string | undefined } },
  metrics: ServiceMetrics,
  cleanups: CleanupStack,
): Promise<string> {
  const serve = metricsHandler(metrics, { token: config.metrics.token });
  const server = createServer((req, res) => {
    const header = (name: string) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value.join(', ') : value;
    };
    const target = req.url ?? '/';
    const end = target.search(/[?#]/);
    const path = end < 0 ? target : target.slice(0, end);
    const write = (result: RouteResult) => {
      const { status, headers, body } = encodeResult(result);
      res.writeHead(status, headers);
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    if (path !== '/metrics') {
      write(
        errorResult({ status: 404, code: 'not_found', requestId: requestIdOf(header), retryable: false }),
      );
    } else if (req.method !== 'GET' && req.method !== 'HEAD') {
      write(
        errorResult({
          status: 405,
          code: 'method_not_allowed',
          requestId: requestIdOf(header),
          retryable: false,
          message: `${req.method} is not served here`,
          headers: { allow: 'GET, HEAD' },
        }),
      );
    } else {
      serve({ header }).then(write, () =>
        write(
          errorResult({
            status: 503,
            code: 'internal_error',
            requestId: requestIdOf(header),
            retryable: true,
          }),
        ),
      );
    }
  });
  await listenOn(
    'METRICS_PORT',
    config.metrics.port,
    () =>
      new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.metrics.port, config.host, () => {
          server.off('error', reject);
          resolve();
        });
      }),
  );
  cleanups.push(
    'metrics server',
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  const { port } = server.address() as AddressInfo;
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}/metrics`;
}
