import type { IncomingMessage } from 'node:http';
import { requestIdOf } from '../gate/admit';
import { errorResponse } from '../gate/responses';
import type { GateResponse } from '../http/types';

/**
 * The 400 for an asterisk-form request target (`GET * HTTP/1.1`), which RFC 9112 section 3.2.4
 * allows only for `OPTIONS` (the server as a whole): a router would otherwise serve it as some
 * path (Fastify routes it to `/`). Every adapter asks first, before routing and the gate;
 * `OPTIONS *` passes to the application. `undefined` for any other target.
 *
 * @example
 * const refusal = asteriskFormRefusal(req);
 * if (refusal) return writeGateResponse(res, refusal);
 */
export function asteriskFormRefusal(req: IncomingMessage): GateResponse | undefined {
  if (req.url !== '*' || req.method === 'OPTIONS') return undefined;
  const header = (name: string) => {
    const value = req.headers[name.toLowerCase()];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  return errorResponse(
    'invalid_request_target',
    requestIdOf({ method: req.method ?? 'GET', url: '*', header }),
    'the asterisk-form target * is only for OPTIONS',
  );
}
