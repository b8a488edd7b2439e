// The soak's payers: `concurrency` workers, each signing a fresh payment and sending it until it
// is answered 200 or refused for good (or its time is up), tracking every payment for the
// agreement check.
import type { PaymentRequired } from '@tollbooth/core';
import type { Hex } from 'viem';
import {
  type Answer,
  type Payment,
  refusalOf,
  sendPayment,
  signPayment,
} from '../test/support/fault-payments';
import { sleep } from './options';

/** A payment is retried until 200 (or a final refusal) for this long after it was first sent. */
const PAYMENT_BOUND_MS = 180_000;

export interface Tracked {
  payment: Payment;
  firstSentAt: number;
  attempts: number;
  final?: Answer;
  /** The last non-200 reason, for the report. */
  lastRefusal?: string;
  servedAt?: number;
}

/** What the payers did so far: read while they run (progress) and after (the agreement). */
export interface Payers {
  readonly tracked: Tracked[];
  /** Answers by status (`reset` for a connection that got none). */
  readonly statuses: Record<string, number>;
  /** Payments finished: served, refused for good, or given up. */
  done: number;
}

export interface PayOptions {
  serviceUrl: string;
  challenge: PaymentRequired;
  payers: readonly { privateKey: Hex }[];
  total: number;
  concurrency: number;
  /** No payment is started after this time (ms since the epoch). */
  stopStartingAt: number;
}

/** Runs the payers until `total` payments are finished or starting stops; fills `payers`. */
export async function pay(payers: Payers, o: PayOptions): Promise<void> {
  let next = 0;
  async function worker(index: number) {
    while (next < o.total && Date.now() < o.stopStartingAt) {
      const turn = next++;
      const payment = await signPayment(o.challenge, o.payers[(turn + index) % o.payers.length]!.privateKey);
      const entry: Tracked = { payment, firstSentAt: Date.now(), attempts: 0 };
      payers.tracked.push(entry);
      for (;;) {
        entry.attempts += 1;
        let answer: Answer | undefined;
        try {
          answer = await sendPayment(o.serviceUrl, payment, 60_000);
        } catch {
          answer = undefined;
        }
        const key = answer ? String(answer.status) : 'reset';
        payers.statuses[key] = (payers.statuses[key] ?? 0) + 1;
        if (answer?.status === 200) {
          entry.final = answer;
          entry.servedAt = Date.now();
          break;
        }
        if (answer) {
          const refusal = refusalOf(answer);
          entry.lastRefusal = `${answer.status} ${refusal.code ?? ''}`.trim();
          if (refusal.retryable === false || answer.status === 402 || answer.status === 400) {
            entry.final = answer;
            break;
          }
        } else entry.lastRefusal = 'reset';
        if (Date.now() - entry.firstSentAt > PAYMENT_BOUND_MS) break;
        await sleep(250);
      }
      payers.done += 1;
    }
  }
  await Promise.all(Array.from({ length: o.concurrency }, (_, index) => worker(index)));
}
