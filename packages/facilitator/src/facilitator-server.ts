import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type FacilitatorClient,
  FacilitatorRequest,
  PaymentPayload,
  PaymentPayloadV1,
  PaymentRequirements,
  PaymentRequirementsV1,
} from '@tollbooth/core';

export interface FacilitatorServerOptions {
  /** What verifies and settles: the in-process EVM facilitator, a pool, or a proxy to another facilitator. */
  facilitator: FacilitatorClient;
  /** Called for every request; return false to answer 401. Default: everyone may call. */
  authorize?: (request: IncomingMessage) => boolean | Promise<boolean>;
  /** Largest accepted request body. Default 64 KiB. */
  maxBodyBytes?: number;
  /** Path prefix, e.g. `/x402` serves `/x402/verify`. Default none. */
  basePath?: string;
}

export const DEFAULTS = { maxBodyBytes: 64 * 1024, basePath: '' } as const;

export interface RunningFacilitatorServer {
  /** Base URL, e.g. `http://127.0.0.1:4021`. */
  url: string;
  server: Server;
  close(): Promise<void>;
}

/**
 * The standard facilitator HTTP API over any `FacilitatorClient`: `POST /verify`,
 * `POST /settle` (body `{x402Version, paymentPayload, paymentRequirements}`) and
 * `GET /supported`. A malformed request answers 400; a failed verification is a 200 with
 * `isValid: false`, as the official facilitators answer.
 */
export function createFacilitatorHandler(options: FacilitatorServerOptions) {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULTS.maxBodyBytes;
  const base = (options.basePath ?? DEFAULTS.basePath).replace(/\/$/, '');
  const { facilitator } = options;

  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      if (options.authorize && !(await options.authorize(req)))
        return send(res, 401, { error: 'unauthorized' });
      const path = new URL(req.url ?? '/', 'http://localhost').pathname;
      const route = path.startsWith(base) ? path.slice(base.length) : undefined;
      if (route === '/supported' && req.method === 'GET')
        return send(res, 200, await facilitator.supported());
      if ((route === '/verify' || route === '/settle') && req.method === 'POST') {
        const parsed = parseRequest(await readBody(req, maxBodyBytes));
        if ('error' in parsed) return send(res, 400, { error: parsed.error });
        const { payload, requirements } = parsed;
        const result =
          route === '/verify'
            ? await facilitator.verify(payload, requirements)
            : await facilitator.settle(payload, requirements);
        return send(res, 200, result);
      }
      if (route === '/verify' || route === '/settle' || route === '/supported') {
        return send(res, 405, { error: 'method not allowed' });
      }
      return send(res, 404, { error: 'not found' });
    } catch (error) {
      if (error instanceof BodyError) return send(res, error.status, { error: error.message });
      // The outcome of the operation is unknown to us too: a 502 tells the caller so.
      return send(res, 502, { error: error instanceof Error ? error.message : 'facilitator error' });
    }
  };
}

/** Starts the facilitator HTTP API on a port (default: a free one on 127.0.0.1). */
export async function startFacilitatorServer(
  options: FacilitatorServerOptions & { port?: number; host?: string },
): Promise<RunningFacilitatorServer> {
  const handler = createFacilitatorHandler(options);
  const server = createServer((req, res) => void handler(req, res));
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

type ParsedRequest =
  | { payload: PaymentPayload | PaymentPayloadV1; requirements: PaymentRequirements | PaymentRequirementsV1 }
  | { error: string };

function parseRequest(body: string): ParsedRequest {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { error: 'body is not JSON' };
  }
  const request = FacilitatorRequest.safeParse(json);
  if (!request.success) return { error: `invalid request: ${describe(request.error)}` };
  const v2 = request.data.x402Version === 2;
  const payload = (v2 ? PaymentPayload : PaymentPayloadV1).safeParse(request.data.paymentPayload);
  if (!payload.success) return { error: `invalid paymentPayload: ${describe(payload.error)}` };
  const requirements = (v2 ? PaymentRequirements : PaymentRequirementsV1).safeParse(
    request.data.paymentRequirements,
  );
  if (!requirements.success) return { error: `invalid paymentRequirements: ${describe(requirements.error)}` };
  return { payload: payload.data, requirements: requirements.data };
}

function describe(error: { issues: Array<{ path: PropertyKey[]; message: string }> }): string {
  const issue = error.issues[0];
  return issue ? `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}` : 'invalid';
}

class BodyError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new BodyError(413, `body larger than ${limit} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
