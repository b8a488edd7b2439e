// Payments for the fault tests and the soak: signed for the fee service's paid decision, sent
// byte for byte again until served, and their answers read (refusal code, served transaction).
import { request as httpRequest } from 'node:http';
import { decodeHeaderJson, encodeHeader, type PaymentRequired } from '@tollbooth/core';
import { createPaymentPayload } from '@tollbooth/evm';
import type { Address, Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

/** The paid decision every fault is played on (settles before its handler). */
export const DECISION_PATH = '/api/v1/fees/now';
/** Its price, atomic units of the devnet token. */
export const DECISION_PRICE = 1000n;

/** One signed payment for the decision. */
export interface Payment {
  payer: Address;
  nonce: Hex;
  /** The PAYMENT-SIGNATURE value, retried byte for byte. */
  header: string;
}

/** The decision's 402 challenge (asked once; every payment is signed against it). */
export async function decisionChallenge(serviceUrl: string): Promise<PaymentRequired> {
  const response = await fetch(`${serviceUrl}${DECISION_PATH}`);
  if (response.status !== 402) throw new Error(`expected 402 from the decision, got ${response.status}`);
  const header = response.headers.get('payment-required');
  if (!header) throw new Error('no PAYMENT-REQUIRED header');
  return decodeHeaderJson(header) as PaymentRequired;
}

/** Signs a payment (a fresh random EIP-3009 nonce) for the challenge. */
export async function signPayment(challenge: PaymentRequired, payerKey: Hex): Promise<Payment> {
  const account = privateKeyToAccount(payerKey);
  const payload = await createPaymentPayload({ paymentRequired: challenge, account });
  const authorization = (payload.payload as { authorization: { from: Address; nonce: Hex } }).authorization;
  return { payer: account.address, nonce: authorization.nonce, header: encodeHeader(payload) };
}

/** A response read whole. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends the payment once (a fresh connection; `agent: false`). Rejects when the connection dies. */
export function sendPayment(serviceUrl: string, payment: Payment, timeoutMs = 60_000): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${serviceUrl}${DECISION_PATH}`,
      { agent: false, headers: { 'payment-signature': payment.header }, timeout: timeoutMs },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers as Record<string, string>,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/** The error code and retryability of a refusal body. */
export function refusalOf(answer: Answer): { code: string | undefined; retryable: boolean | undefined } {
  try {
    const json = JSON.parse(answer.body) as {
      error?: string | { code?: string; retryable?: boolean };
    };
    if (typeof json.error === 'string') return { code: json.error, retryable: undefined };
    return { code: json.error?.code, retryable: json.error?.retryable };
  } catch {
    return { code: undefined, retryable: undefined };
  }
}

/** The transaction a 200 decision names (body `meta.payment.transaction_hash`) and its receipt header's. */
export function servedTransaction(answer: Answer): { body: string | undefined; receipt: string | undefined } {
  let body: string | undefined;
  try {
    body = (JSON.parse(answer.body) as { meta?: { payment?: { transaction_hash?: string } } }).meta?.payment
      ?.transaction_hash;
  } catch {
    body = undefined;
  }
  const header = answer.headers['payment-response'];
  const receipt = header ? (decodeHeaderJson(header) as { transaction?: string }).transaction : undefined;
  return { body, receipt };
}

export interface RetryOutcome {
  answer: Answer | undefined;
  /** Every non-200 status (or `reset`) seen before the 200, in order. */
  seen: string[];
  /** Wall time from the first retry to the 200 (or to giving up), ms. */
  elapsedMs: number;
  /** Epoch ms of the last answer. */
  finishedAt: number;
}

/**
 * Retries the exact payload until it is answered 200, a refusal that is not retryable, or
 * `boundMs` has passed (the bound the tests assert, not a wait). Pauses `pauseMs` between tries.
 */
export async function retryUntilServed(
  serviceUrl: string,
  payment: Payment,
  boundMs = 60_000,
  pauseMs = 200,
): Promise<RetryOutcome> {
  const started = Date.now();
  const seen: string[] = [];
  const done = (answer: Answer | undefined): RetryOutcome => {
    const finishedAt = Date.now();
    return { answer, seen, elapsedMs: finishedAt - started, finishedAt };
  };
  for (;;) {
    let answer: Answer | undefined;
    try {
      answer = await sendPayment(serviceUrl, payment, Math.max(1_000, boundMs - (Date.now() - started)));
    } catch {
      seen.push('reset');
    }
    if (answer?.status === 200) return done(answer);
    if (answer) {
      const refusal = refusalOf(answer);
      seen.push(`${answer.status} ${refusal.code ?? ''}`.trim());
      if (refusal.retryable === false || answer.status === 402 || answer.status === 400) return done(answer);
    }
    if (Date.now() - started >= boundMs) return done(answer);
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
}

/** Sends a raw HTTP/1.1 request over a socket and reads the whole answer (Connection: close). */
export async function rawRequest(url: string, head: string): Promise<Answer> {
  const { connect } = await import('node:net');
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(head));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0);
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      let body = text.slice(split + 4);
      if (headers['transfer-encoding'] === 'chunked') body = unchunk(body);
      resolve({ status, headers, body });
    });
  });
}

function unchunk(text: string): string {
  let out = '';
  let rest = text;
  for (;;) {
    const line = rest.indexOf('\r\n');
    const size = Number.parseInt(rest.slice(0, line), 16);
    if (!size) return out;
    out += rest.slice(line + 2, line + 2 + size);
    rest = rest.slice(line + 2 + size + 2);
  }
}
