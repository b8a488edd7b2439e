// Pools of real, distinct EIP-3009 payments signed with viem before a run: a payment can be used
// once, so every paid request of a run needs its own. One pool serves every server of a run
// because each server process has its own ledger.
import {
  compileRoutes,
  encodeHeader,
  type PaymentPayload,
  type PaymentRequired,
  type PaymentRequirements,
} from '@tollbooth/core';
import { createExactEvmScheme, createPaymentPayload } from '@tollbooth/evm';
import type { LocalAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { benchRoutes, PAID_PATH } from './fixtures';

/** Deterministic payer keys (not anvil's): payments in the HTTP benchmarks never reach a chain. */
export function benchPayers(count: number): LocalAccount[] {
  return Array.from({ length: count }, (_, i) =>
    privateKeyToAccount(`0x${(i + 1).toString(16).padStart(2, '0').repeat(32)}` as `0x${string}`),
  );
}

/** The challenge of the benchmark route, computed from the same route table the servers use. */
export function benchChallenge(origin = 'http://127.0.0.1'): PaymentRequired {
  const table = compileRoutes(benchRoutes(), { schemes: [createExactEvmScheme()] });
  const route = table.routes[0]!;
  return route.challenge(`${origin}${PAID_PATH}`).object as PaymentRequired;
}

export interface PaymentPool {
  payloads: PaymentPayload[];
  /** `PAYMENT-SIGNATURE` header values, one per payload. */
  headers: string[];
  /** Milliseconds spent signing. */
  signingMs: number;
}

/** Signs `count` distinct payments for `challenge`, round-robin over `accounts`. */
export async function signPaymentPool(options: {
  count: number;
  challenge: PaymentRequired;
  accounts: readonly Pick<LocalAccount, 'address' | 'signTypedData'>[];
  onProgress?: (done: number) => void;
}): Promise<PaymentPool> {
  const { count, challenge, accounts } = options;
  const started = performance.now();
  const payloads: PaymentPayload[] = [];
  for (let i = 0; i < count; i++) {
    payloads.push(
      await createPaymentPayload({ paymentRequired: challenge, account: accounts[i % accounts.length]! }),
    );
    if (options.onProgress && (i + 1) % 1000 === 0) options.onProgress(i + 1);
  }
  return { payloads, headers: payloads.map((p) => encodeHeader(p)), signingMs: performance.now() - started };
}

/** The one requirement of a benchmark challenge. */
export function requirementOf(challenge: PaymentRequired): PaymentRequirements {
  return challenge.accepts[0]!;
}
