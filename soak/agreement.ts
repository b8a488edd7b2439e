// The soak's verdict: the ledger and the chain must agree exactly — every transfer on chain ↔ one
// settled ledger entry with its stored 200 and the same transaction, 0 authorizations used twice,
// 0 payments charged and never answered 200 — and what the payers saw, in figures.
import type { LedgerEntry } from '@tollbooth/core';
import { authKey, type ChainCharges } from '../test/support/fault-chain';
import { refusalOf, servedTransaction } from '../test/support/fault-payments';
import type { Tracked } from './payers';

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** The payers' outcomes, the chain, the ledger and their agreement, as the report shows them. */
export function judge(tracked: readonly Tracked[], chain: ChainCharges, entries: readonly LedgerEntry[]) {
  const settled = entries.filter((entry) => entry.state === 'settled');
  const byTransaction = new Map(settled.map((entry) => [entry.transaction?.toLowerCase(), entry]));
  const transferTxs = new Set(chain.transfers.map((t) => t.transaction.toLowerCase()));

  const usedTwice = [...chain.used.values()].filter((hashes) => hashes.length > 1).length;
  const transfersWithoutSettledEntry = chain.transfers.filter(
    (t) => !byTransaction.has(t.transaction.toLowerCase()),
  ).length;
  const settledWithoutTransfer = settled.filter(
    (entry) => !transferTxs.has(String(entry.transaction).toLowerCase()),
  ).length;
  const settledWithout200 = settled.filter((entry) => entry.response?.status !== 200).length;
  const wrongValue = chain.transfers.filter((t) => t.value !== 1000n).length;
  let chargedNeverServed = 0;
  let servedWrongTransaction = 0;
  let servedNotCharged = 0;
  let notCharged = 0;
  const finalRefusals: Record<string, number> = {};
  const serveTimes: number[] = [];
  const attempts: number[] = [];
  for (const entry of tracked) {
    const used = chain.used.get(authKey(entry.payment.payer, entry.payment.nonce));
    attempts.push(entry.attempts);
    if (entry.final?.status === 200) {
      serveTimes.push(entry.servedAt! - entry.firstSentAt);
      const served = servedTransaction(entry.final);
      if (!used) servedNotCharged += 1;
      else if (served.body !== used[0] || served.receipt !== used[0]) servedWrongTransaction += 1;
    } else {
      const reason = entry.final
        ? `${entry.final.status} ${refusalOf(entry.final).code ?? ''}`.trim()
        : `gave up (${entry.lastRefusal})`;
      finalRefusals[reason] = (finalRefusals[reason] ?? 0) + 1;
      if (used) chargedNeverServed += 1;
      else notCharged += 1;
    }
  }
  serveTimes.sort((a, b) => a - b);
  attempts.sort((a, b) => a - b);
  const byState: Record<string, number> = {};
  for (const entry of entries) byState[entry.state] = (byState[entry.state] ?? 0) + 1;

  const agree =
    usedTwice === 0 &&
    chargedNeverServed === 0 &&
    servedWrongTransaction === 0 &&
    servedNotCharged === 0 &&
    transfersWithoutSettledEntry === 0 &&
    settledWithoutTransfer === 0 &&
    settledWithout200 === 0 &&
    wrongValue === 0 &&
    chain.transfers.length === chain.used.size &&
    settled.length === chain.transfers.length;
  return {
    outcomes: {
      served200: serveTimes.length,
      notServed: tracked.length - serveTimes.length,
      finalRefusals,
      notCharged,
      attemptsPerPayment: {
        p50: percentile(attempts, 50),
        p99: percentile(attempts, 99),
        max: attempts.at(-1),
      },
      msToServed: {
        p50: percentile(serveTimes, 50),
        p99: percentile(serveTimes, 99),
        max: serveTimes.at(-1) ?? 0,
      },
    },
    chain: { authorizationsUsed: chain.used.size, transfers: chain.transfers.length },
    ledger: { entries: entries.length, byState },
    agreement: {
      chargedTwice: usedTwice,
      chargedNeverServed,
      servedWrongTransaction,
      servedNotCharged,
      transfersWithoutSettledEntry,
      settledWithoutTransfer,
      settledWithout200,
      transfersOfAnotherAmount: wrongValue,
      transfersEqualAuthorizations: chain.transfers.length === chain.used.size,
    },
    agree,
  };
}
