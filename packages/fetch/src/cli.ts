#!/usr/bin/env node
// tollbooth-pay: pay an x402 API from the command line (for testing your own paid API on a devnet).
import { parseArgs } from 'node:util';
import { fromAtomicAmount, toAtomicAmount } from '@tollbooth/core';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createEvmPaymentSigner } from './evm-signer';
import { formatPaidResponse } from './format-paid-response';
import { runToolCall } from './mcp/tool-call-cli';
import { createPayingClient, PaymentClientError } from './paying-fetch';

const USAGE = `usage: tollbooth-pay <url> [--max 0.01] [-X METHOD] [-d BODY] [-H 'name: value']... [-v]
       tollbooth-pay <mcp-url> --tool NAME [--args JSON] [--max 0.01] [-v]
  Pays a 402 challenge once and prints a summary: status, amount, payer, transaction, the body.
  With --tool: calls that tool of the MCP server at <mcp-url> (streamable HTTP) and pays its
  x402 challenge (docs/mcp.md#a-paying-mcp-client); --args are its arguments as a JSON object.
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
    tool: { type: 'string' },
    args: { type: 'string' },
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
let toolArguments: Record<string, unknown> = {};
if (values.args !== undefined) {
  let parsed: unknown;
  try {
    parsed = JSON.parse(values.args);
  } catch {
    parsed = undefined;
  }
  if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
    toolArguments = parsed as Record<string, unknown>;
  else problems.push('--args must be a JSON object');
  if (values.tool === undefined) problems.push('--args goes with --tool');
}
if (problems.length > 0 || !url || !key) {
  console.error(`${problems.join('\n')}\n\n${USAGE}`);
  process.exit(2);
}

/** What went wrong, one line, and for a price above `--max` the `--max` that pays it. */
function refusal(error: unknown): string {
  if (!(error instanceof PaymentClientError)) return String(error instanceof Error ? error.stack : error);
  const line = `${error.code}: ${error.message}`;
  if (error.code !== 'spend_limit_exceeded' || error.amount === undefined) return line;
  const price = fromAtomicAmount(error.amount, 6);
  const given = process.argv.some((arg) => arg === '--max' || arg.startsWith('--max='));
  return `${line}
The price is ${price} (USDC), above --max ${values.max}${given ? '' : ' (the default)'}: run again with --max ${price} to pay it.`;
}

const account = privateKeyToAccount(key as Hex);
if (values.tool !== undefined) {
  try {
    const { text, ok } = await runToolCall({
      url,
      tool: values.tool,
      arguments: toolArguments,
      account,
      maxAmount,
      verbose: values.verbose === true,
    });
    console.log(text);
    process.exit(ok ? 0 : 1);
  } catch (error) {
    console.error(refusal(error));
    process.exit(1);
  }
}
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
  console.error(refusal(error));
  process.exit(1);
}
