import type { FaultAudit } from './types';

const SERVED_ONCE =
  'serve the exact payload retried once the facilitator recovers, charging the payer once in all';

/**
 * One audit per fault the proxy plays between the server and its facilitator. The first is the
 * x402 paid flow itself; the others are Tollbooth's retry discipline (a retryable 502 when the
 * outcome is unknown, the exact payload retried and answered from the chain, never a second
 * charge), which servers without a settlement ledger do not keep.
 */
export const FAULT_AUDITS: readonly FaultAudit[] = [
  {
    id: 'AFLT-01',
    level: 'MUST',
    profile: 'x402',
    sentence:
      'MUST answer a valid payment with the resource and a PAYMENT-RESPONSE naming the transaction that transferred exactly the price on chain',
    fault: { mode: 'pass' },
    expect: 'served',
  },
  {
    id: 'AFLT-02',
    level: 'MUST',
    profile: 'tollbooth',
    sentence: `MUST answer with a 5xx, charging nothing, while the facilitator does not answer /verify, and ${SERVED_ONCE}`,
    fault: { mode: 'verify-timeout' },
    expect: 'unpaid',
  },
  {
    id: 'AFLT-03',
    level: 'MUST',
    profile: 'tollbooth',
    sentence: `MUST answer 502, never a refusal, when the answer of /settle is lost after the transfer landed, and ${SERVED_ONCE}`,
    fault: { mode: 'settle-answer-dropped' },
    expect: 'uncertain',
  },
  {
    id: 'AFLT-04',
    level: 'MUST',
    profile: 'tollbooth',
    sentence: `MUST answer 502, never a refusal, when /settle times out after the facilitator broadcast, and ${SERVED_ONCE}`,
    fault: { mode: 'settle-answer-hung' },
    expect: 'uncertain',
  },
  {
    id: 'AFLT-05',
    level: 'MUST',
    profile: 'tollbooth',
    sentence: `MUST answer 502, never a refusal, when /settle answers 500 after the transfer landed, and ${SERVED_ONCE}`,
    fault: { mode: 'settle-500-after-transfer' },
    expect: 'uncertain',
  },
  {
    id: 'AFLT-06',
    level: 'MUST',
    profile: 'tollbooth',
    sentence: `MUST NOT serve on a settlement success whose transaction the chain does not show (answer 502), and ${SERVED_ONCE}`,
    fault: { mode: 'settle-unmined-hash' },
    expect: 'uncertain',
  },
  {
    id: 'AFLT-07',
    level: 'SHOULD',
    profile: 'tollbooth',
    sentence: 'SHOULD serve a valid payment, charging once, while the facilitator’s /supported is slow',
    fault: { mode: 'slow-supported' },
    expect: 'served',
  },
  {
    id: 'AFLT-08',
    level: 'MUST',
    profile: 'tollbooth',
    sentence: `MUST answer with a 5xx, charging nothing, when /verify answers JSON it cannot parse, and ${SERVED_ONCE}`,
    fault: { mode: 'garbage-json', operations: ['verify'] },
    expect: 'unpaid',
  },
  {
    id: 'AFLT-09',
    level: 'MUST',
    profile: 'tollbooth',
    sentence: `MUST answer 502, never a refusal, when /settle answers JSON it cannot parse, and ${SERVED_ONCE}`,
    fault: { mode: 'garbage-json', operations: ['settle'] },
    expect: 'uncertain',
  },
  {
    id: 'AFLT-10',
    level: 'MUST',
    profile: 'tollbooth',
    sentence: `MUST answer with a 5xx, charging nothing, when the connection to /verify is reset, and ${SERVED_ONCE}`,
    fault: { mode: 'connection-reset', operations: ['verify'] },
    expect: 'unpaid',
  },
  {
    id: 'AFLT-11',
    level: 'MUST',
    profile: 'tollbooth',
    sentence: `MUST answer 502, never a refusal, when the connection to /settle is reset, and ${SERVED_ONCE}`,
    fault: { mode: 'connection-reset', operations: ['settle'] },
    expect: 'uncertain',
  },
  {
    id: 'AFLT-12',
    level: 'MUST',
    profile: 'tollbooth',
    sentence: `MUST answer 502 when the facilitator freezes in /settle (the transfer then lands late), and ${SERVED_ONCE}`,
    fault: { mode: 'frozen', operations: ['settle'] },
    expect: 'uncertain',
  },
  {
    id: 'AFLT-13',
    level: 'MUST',
    profile: 'tollbooth',
    sentence: `MUST NOT refuse a payment whose /settle answers "failed" (HTTP 200) after the transfer landed: the chain judges the refusal, and the payment is served on its receipt, at once or when the exact payload is retried, charging the payer once in all`,
    fault: { mode: 'settle-failed-after-transfer' },
    expect: 'uncertain',
  },
  {
    id: 'AFLT-14',
    level: 'MUST',
    profile: 'tollbooth',
    sentence: `MUST NOT refuse a payment whose /settle answers "failed" with HTTP 400 after the transfer landed: the chain judges the refusal, and the payment is served on its receipt, at once or when the exact payload is retried, charging the payer once in all`,
    fault: { mode: 'settle-failed-400-after-transfer' },
    expect: 'uncertain',
  },
  {
    id: 'AFLT-15',
    level: 'MUST',
    profile: 'tollbooth',
    sentence:
      'MUST answer one payload sent five times at once, and once more after, with the same paid answer and receipt, charging the payer once (stored-answer replay, the default)',
    fault: { mode: 'pass' },
    expect: 'served',
    replay: 'stored-answer',
  },
  {
    id: 'AFLT-16',
    level: 'MUST',
    profile: 'tollbooth',
    sentence:
      'MUST answer one payload sent five times at once with one paid answer and four refusals (402 payment_already_used or 409), and refuse it once more after, charging the payer once (strict replay)',
    fault: { mode: 'pass' },
    expect: 'served',
    replay: 'strict',
  },
  {
    id: 'AFLT-17',
    level: 'MUST',
    profile: 'tollbooth',
    sentence:
      'MUST answer 402, delivering no paid answer and charging nothing, when /settle refuses the payment definitely (after a local verify the handler’s work is the only cost), and never serve nor charge the exact payload retried',
    fault: { mode: 'settle-refused' },
    expect: 'refused',
  },
];
