// `npm run demo`: pays for one send-or-wait decision with a devnet payer and prints every step —
// the 402 challenge, the signed payment, the decision and the settlement receipt. Pays the
// service at `--url` (or DEMO_URL), else the one `npm start` runs on this machine
// (http://127.0.0.1:$PORT, default 3000) when it answers, else starts the whole stack in-process.
// Exits 0 when the decision was paid and received.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeHeaderJson, type PaymentRequired } from '@tollbooth/core';
import { anvilAccount } from '@tollbooth/devnet';
import { createEvmPaymentSigner, createPayingClient } from '@tollbooth/fetch';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { loadConfig } from './config';
import { type RunningFeeService, startFeeService } from './service';

/** The devnet's first payer (anvil mnemonic index 3): a public test key, funded only on the devnet. */
export const DEVNET_DEMO_PAYER_INDEX = 3;

export interface DemoOptions {
  /** Base URL of a running fee service; default: the local one if it answers, else one in-process. */
  url?: string;
  /** Where to look for a running service when `url` is not given; false: always start one. */
  localUrl?: string | false;
  /** Payer key; default the devnet's first payer. */
  payerKey?: Hex;
  /** Where to print. Default console.log. */
  print?: (line: string) => void;
  env?: Record<string, string | undefined>;
}

const json = (value: unknown) => JSON.stringify(value, null, 2);

/**
 * Runs the demo; resolves true when the decision was paid for and received with a receipt.
 * @example const ok = await runDemo({ url: 'http://127.0.0.1:3000' });
 */
export async function runDemo(options: DemoOptions = {}): Promise<boolean> {
  const print = options.print ?? ((line: string) => console.log(line));
  let service: RunningFeeService | undefined;
  let scratch: string | undefined;
  try {
    let baseUrl = options.url?.replace(/\/$/, '');
    let payerKey = options.payerKey;
    if (baseUrl) {
      if (!(await isFeeService(baseUrl))) {
        print(`No fee service answers at ${baseUrl} (GET /api/v1/fees/preview): is it running?`);
        return false;
      }
      print(`Paying the fee service at ${baseUrl}`);
    } else if (options.localUrl && (await isFeeService(options.localUrl))) {
      baseUrl = options.localUrl.replace(/\/$/, '');
      print(`Paying the fee service running at ${baseUrl} (--url <base URL> to pay another)`);
    } else {
      scratch = mkdtempSync(join(tmpdir(), 'fee-service-demo-'));
      const config = loadConfig({
        LOG_LEVEL: 'warn',
        ...options.env,
        PORT: '0',
        PROFILE: 'local',
        LEDGER_URL: `sqlite:${join(scratch, 'ledger.sqlite')}`,
      });
      print('Starting the fee service in-process (simulator upstream, devnet, in-process facilitator)…');
      service = await startFeeService(config);
      baseUrl = service.baseUrl;
      payerKey ??= service.devnet?.accounts.payers[0]?.privateKey;
      print(`Fee service at ${baseUrl} on ${config.framework}`);
    }
    payerKey ??= anvilAccount(DEVNET_DEMO_PAYER_INDEX).privateKey;
    const account = privateKeyToAccount(payerKey);
    const decisionUrl = `${baseUrl}/api/v1/fees/now`;

    print('\n1. Free preview: GET /api/v1/fees/preview');
    const preview = await fetch(`${baseUrl}/api/v1/fees/preview`);
    const previewBody = (await preview.json()) as { data?: { fee_rates_sat_vb?: unknown } };
    print(`   ${preview.status} fee rates (sat/vB): ${JSON.stringify(previewBody.data?.fee_rates_sat_vb)}`);

    print('\n2. Paid decision without payment: GET /api/v1/fees/now');
    const unpaid = await fetch(decisionUrl);
    const header = unpaid.headers.get('payment-required');
    print(`   ${unpaid.status} ${unpaid.statusText}`);
    if (unpaid.status !== 402 || !header) {
      print(`   expected a 402 challenge, got: ${await unpaid.text()}`);
      return false;
    }
    const challenge = decodeHeaderJson(header) as PaymentRequired;
    print(
      `   PAYMENT-REQUIRED (decoded): ${json({ x402Version: challenge.x402Version, resource: challenge.resource, accepts: challenge.accepts })}`,
    );

    print(`\n3. Paying with ${account.address} (max 0.001 USDC)`);
    const client = createPayingClient({
      signer: createEvmPaymentSigner({ account }),
      maxAmountPerPayment: 1000n,
      maxTotal: 1000n,
    });
    const paid = await client.pay(decisionUrl);
    const payload = paid.payload as { payload?: { authorization?: Record<string, unknown> } } | undefined;
    print(`   PAYMENT-SIGNATURE authorization: ${json(payload?.payload?.authorization)}`);
    print(`   ${paid.response.status} ${paid.response.statusText} after ${paid.attempts} paid attempt(s)`);
    const body = (await paid.response.json()) as { data?: unknown; meta?: { payment?: unknown } };
    if (paid.response.status !== 200) {
      print(`   ${json(body)}`);
      return false;
    }
    print('\n4. Decision:');
    print(json(body));
    print('\n5. Settlement receipt (PAYMENT-RESPONSE, decoded):');
    print(json(paid.receipt));
    const ok = paid.receipt?.success === true && typeof paid.receipt.transaction === 'string';
    print(
      ok
        ? `\nPaid 0.001 USDC in transaction ${paid.receipt?.transaction}. Done.`
        : '\nNo successful receipt.',
    );
    return ok;
  } finally {
    await service?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}

/** Whether a fee service answers its free preview at `baseUrl` (within 3 s). */
async function isFeeService(baseUrl: string): Promise<boolean> {
  try {
    const response = await fetch(`${baseUrl.replace(/\/$/, '')}/api/v1/fees/preview`, {
      signal: AbortSignal.timeout(3_000),
    });
    const body = (await response.json()) as { data?: { fee_rates_sat_vb?: unknown } };
    return response.ok && body.data?.fee_rates_sat_vb !== undefined;
  } catch {
    return false;
  }
}

const invokedDirectly = process.argv[1] !== undefined && /demo\.ts$/.test(process.argv[1]);
if (invokedDirectly) {
  const flag = process.argv.indexOf('--url');
  const url = flag >= 0 ? process.argv[flag + 1] : process.env['DEMO_URL'];
  const payerKey = process.env['DEMO_PAYER_KEY'] as Hex | undefined;
  const localUrl = `http://127.0.0.1:${process.env['PORT'] || 3000}`;
  runDemo({ ...(url ? { url } : {}), ...(payerKey ? { payerKey } : {}), localUrl, env: process.env }).then(
    (ok) => process.exit(ok ? 0 : 1),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
