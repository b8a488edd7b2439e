// Starts fee services for the tests: one devnet and simulators shared per file, a service per
// framework and profile, each on a free port with its own SQLite ledger.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeHeaderJson, encodeHeader, type PaymentRequired } from '@tollbooth/core';
import type { Devnet } from '@tollbooth/devnet';
import { createPaymentPayload } from '@tollbooth/evm';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { loadConfig } from '../../src/config';
import { type FeeServiceOverrides, type RunningFeeService, startFeeService } from '../../src/service';

export const FRAMEWORKS = ['fastify', 'express', 'koa'] as const;
export type FrameworkName = (typeof FRAMEWORKS)[number];

const scratch = mkdtempSync(join(tmpdir(), 'fee-service-test-'));
let counter = 0;

/** Starts a fee service with test defaults (port 0, silent logs, a fresh SQLite ledger). */
export async function startTestService(
  env: Record<string, string>,
  overrides: FeeServiceOverrides,
): Promise<RunningFeeService> {
  counter += 1;
  const config = loadConfig({
    PORT: '0',
    LOG_LEVEL: 'silent',
    LEDGER_URL: `sqlite:${join(scratch, `ledger-${process.pid}-${counter}.sqlite`)}`,
    FACILITATOR_SETTLE_TIMEOUT_MS: '5000',
    ...env,
  });
  return startFeeService(config, overrides);
}

/** Removes the SQLite files of this test file. */
export function removeScratch(): void {
  rmSync(scratch, { recursive: true, force: true });
}

/** The decoded PAYMENT-REQUIRED header of a 402 response. */
export function challengeOf(response: Response): PaymentRequired {
  const header = response.headers.get('payment-required');
  if (!header) throw new Error(`no PAYMENT-REQUIRED header (status ${response.status})`);
  return decodeHeaderJson(header) as PaymentRequired;
}

/** Signs a payment for `url`'s challenge with a devnet payer; returns the PAYMENT-SIGNATURE value. */
export async function signPayment(url: string, privateKey: Hex, init?: RequestInit): Promise<string> {
  const unpaid = await fetch(url, init);
  if (unpaid.status !== 402) throw new Error(`expected 402 from ${url}, got ${unpaid.status}`);
  const payload = await createPaymentPayload({
    paymentRequired: challengeOf(unpaid),
    account: privateKeyToAccount(privateKey),
  });
  return encodeHeader(payload);
}

/** Token balance of an address on the devnet. */
export const balanceOf = (devnet: Devnet, address: string) => devnet.balanceOf(address as `0x${string}`);

/** A parsed JSON body; tests validate it against the contract's JSON Schema before reading fields. */
// biome-ignore lint/suspicious/noExplicitAny: bodies are checked by JSON Schema before their fields are read
export type JsonBody = Record<string, any>;
