// The bodies and writes the fault proxy answers with in place of the facilitator.
import type { ServerResponse } from 'node:http';

/** What `settle-refused` answers for a settle request: a definite refusal, nothing sent. */
export function refusal(body: Buffer) {
  return {
    ...saidFailed(body),
    errorReason: 'invalid_exact_evm_insufficient_balance',
    errorMessage: 'the payer balance does not cover the payment',
  };
}

/** What `settle-failed-after-transfer` answers for a settle request: a refusal naming no transaction. */
export function saidFailed(body: Buffer) {
  const request = parseJson(body) as {
    paymentPayload?: { payload?: { authorization?: { from?: unknown } } };
    paymentRequirements?: { network?: unknown };
  };
  const payer = request?.paymentPayload?.payload?.authorization?.from;
  return {
    success: false,
    errorReason: 'unexpected_settle_error',
    errorMessage: 'the facilitator failed while settling',
    transaction: '',
    network: String(request?.paymentRequirements?.network ?? ''),
    ...(typeof payer === 'string' ? { payer } : {}),
  };
}

export function send(
  res: ServerResponse,
  status: number,
  headers: Record<string, string>,
  body: Buffer | string,
) {
  if (res.destroyed || res.headersSent) return;
  res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

export function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}
