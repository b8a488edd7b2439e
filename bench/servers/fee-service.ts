// The example fee service on embedded defaults (the mempool simulator as upstream, the devnet
// with the in-process facilitator, an in-memory SQLite ledger), rate limiting off (the benchmark
// is one client) and logs silent. `fee-service.ts service` serves the whole service (its default
// Fastify mount: Tollbooth gate, metrics, hooks); `fee-service.ts bare` serves only the preview
// handler, fed by the same kind of snapshot service, on a bare Fastify app — the preview's bare
// framework. (The whole service still runs in that process for its snapshots, but is not asked.)
import { loadConfig } from '@tollbooth/fee-service/src/config';
import type { RouteContext } from '@tollbooth/fee-service/src/http/types';
import { encodeResult } from '@tollbooth/fee-service/src/mount/shared';
import { createPreviewResponder } from '@tollbooth/fee-service/src/resources/fees/preview/handler';
import { feePreview } from '@tollbooth/fee-service/src/resources/fees/preview/resource';
import { startFeeService } from '@tollbooth/fee-service/src/service';
import Fastify, { type FastifyRequest } from 'fastify';
import { announce } from '../lib/serve';

/** What the preview responder reads of a request (only the header reader, for a 503's request id). */
class BareContext implements RouteContext {
  readonly method = 'GET';
  readonly params = {};
  readonly requestId = '';
  readonly payment = undefined;
  constructor(private readonly request: FastifyRequest) {}
  get target(): string {
    return this.request.raw.url ?? this.request.url;
  }
  readBody(): Promise<Buffer> {
    return Promise.resolve(Buffer.alloc(0));
  }
  get url(): URL {
    return new URL(this.request.url, `http://${this.request.host}`);
  }
  get header() {
    return (name: string) => this.request.headers[name.toLowerCase()] as string | undefined;
  }
}

const config = loadConfig({
  ...process.env,
  PORT: '0',
  HOST: '127.0.0.1',
  LEDGER_URL: 'sqlite::memory:',
  RATE_LIMIT_ENABLED: 'false',
  LOG_LEVEL: 'silent',
});
const service = await startFeeService(config);
if (process.argv[2] === 'bare') {
  // The same responder the service mounts (it keeps the encoded preview until the snapshot changes),
  // written as the service's mounts write a result.
  const preview = createPreviewResponder({ snapshots: service.snapshots, network: config.payment.network });
  const app = Fastify({ logger: false });
  app.get(feePreview.path, (request, reply) => {
    const { status, headers, body } = encodeResult(preview(new BareContext(request)));
    reply.code(status).headers(headers).send(body);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  await announce(app.server, {
    stop: async () => {
      await app.close();
      await service.close();
    },
  });
} else {
  await announce(service.server, { stop: () => service.close() });
}
