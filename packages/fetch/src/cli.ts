#!/usr/bin/env node
// tollbooth-pay: pay an x402 API from the command line (for testing your own paid API on a devnet).
import { parseArgs } from 'node:util';
import { toAtomicAmount } from '@tollbooth/core';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createEvmPaymentSigner } from './evm-signer';
import { formatPaidResponse } from './format-paid-response';
import { createPayingClient, PaymentClientError } from './paying-fetch';

const USAGE = `usage: tollbooth-pay <url> [--max 0.01] [-X METHOD] [-d BODY] [-H 'name: value']... [-v]
  Pays a 402 challenge once and prints a summary: status, amount, payer, transaction, the body.
  The payer's private key is read from TOLLBOOTH_PAYER_KEY (use a devnet key, never a real one).
  --max          largest payment, in USDC ("0.01", "$0.01") or atomic units ("10000"); default 0.01
  -v, --verbose  also print the whole challenge, the signed authorization and the receipt

Exit codes: 0 a 2xx answer, 1 any other answer or no payment made (above --max, nothing
payable, network error), 2 bad arguments.`;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    max: { type: 'string', default: '0.01' },
    request: { type: 'string', short: 'X' },
    data: { type: 'string', short: 'd' },
    header: { type: 'string', short: 'H', multiple: true },
    verbose: { type: 'boolean', short: 'v' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const url = positionals[0];
const key = process.env['TOLLBOOTH_PAYER_KEY'];
const problems: string[] = [];
if (!url || !URL.canParse(url)) problems.push('a URL is required');
if (!key || !/^0x[0-9a-fA-F]{64}$/.test(key))
  problems.push('TOLLBOOTH_PAYER_KEY must be a 0x-prefixed 32-byte hex private key');
let maxAmount = 0n;
try {
  maxAmount = BigInt(/^\d+$/.test(values.max) ? values.max : toAtomicAmount(values.max, 6));
} catch {
  problems.push(`--max ${JSON.stringify(values.max)} is not an amount`);
}
const headers = new Headers();
for (const line of values.header ?? []) {
  const at = line.indexOf(':');
  if (at <= 0) problems.push(`-H ${JSON.stringify(line)} is not "name: value"`);
  else headers.append(line.slice(0, at).trim(), line.slice(at + 1).trim());
}
if (problems.length > 0 || !url || !key) {
  console.error(`${problems.join('\n')}\n\n${USAGE}`);
  process.exit(2);
}

const account = privateKeyToAccount(key as Hex);
const client = createPayingClient({
  signer: createEvmPaymentSigner({ account }),
  maxAmountPerPayment: maxAmount,
});
try {
  const method = values.request ?? (values.data === undefined ? 'GET' : 'POST');
  const result = await client.pay(url, {
    method,
    headers,
    ...(values.data === undefined ? {} : { body: values.data }),
  });
  const body = await result.response.text();
  console.log(formatPaidResponse({ result, body, payer: account.address, verbose: values.verbose === true }));
  process.exit(result.response.ok ? 0 : 1);
} catch (error) {
  console.error(error instanceof PaymentClientError ? `${error.code}: ${error.message}` : error);
  process.exit(1);
}
