// Smoke test of the `tollbooth-pay` command against a Tollbooth route on the devnet.
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  balances,
  deltas,
  devnetFacilitator,
  PRICE,
  paidRoute,
  payerAccount,
  startTollboothApp,
} from './support/interop-harness';

// The command's source, run with tsx like the package's own scripts (no build needed).
const cli = join(dirname(fileURLToPath(import.meta.url)), '..', 'packages', 'fetch', 'src', 'cli.ts');

function tollboothPay(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ['--conditions=tollbooth-source', '--import', 'tsx', cli, ...args],
      { env: { ...process.env, ...env }, timeout: 30_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

type Run = Awaited<ReturnType<typeof tollboothPay>>;
let devnet: Devnet;
let app: Awaited<ReturnType<typeof startTollboothApp>>;
const before: Array<{ payer: bigint; payTo: bigint }> = [];
let paid: Run;
let verbose: Run;
let tooDear: Run;
let aboveDefault: Run;
let noKey: Run;

beforeAll(async () => {
  devnet = await startDevnet({ chainId: 8453, payers: 3 });
  app = await startTollboothApp(devnet, {
    routes: {
      'GET /paid': paidRoute(devnet),
      'GET /loud': paidRoute(devnet),
      'GET /dear': paidRoute(devnet, { amount: 2n * PRICE }),
      // The analyst's price, above the default --max of 0.01.
      'GET /analyst': paidRoute(devnet, { amount: 50_000n }),
    },
    facilitator: devnetFacilitator(devnet),
  });
  for (const i of [0, 1, 2]) before.push(await balances(devnet, payerAccount(devnet, i).address));
  // Each run starts a process that compiles the sources: run the five at once.
  [paid, verbose, tooDear, aboveDefault, noKey] = await Promise.all([
    tollboothPay([`${app.url}/paid`, '--max', '$0.001'], {
      TOLLBOOTH_PAYER_KEY: devnet.accounts.payers[0]!.privateKey,
    }),
    tollboothPay([`${app.url}/loud`, '--verbose'], {
      TOLLBOOTH_PAYER_KEY: devnet.accounts.payers[2]!.privateKey,
    }),
    tollboothPay([`${app.url}/dear`, '--max', PRICE.toString()], {
      TOLLBOOTH_PAYER_KEY: devnet.accounts.payers[1]!.privateKey,
    }),
    tollboothPay([`${app.url}/analyst`], { TOLLBOOTH_PAYER_KEY: devnet.accounts.payers[1]!.privateKey }),
    tollboothPay([`${app.url}/paid`], { TOLLBOOTH_PAYER_KEY: '' }),
  ]);
});

afterAll(async () => {
  await app?.close();
  await devnet?.stop();
});

describe('tollbooth-pay', () => {
  it('pays a route once and prints a summary: status, amount, payer, transaction and the body', async () => {
    const payer = payerAccount(devnet, 0);
    expect(paid.stderr).toBe('');
    expect(paid.code).toBe(0);
    const lines = paid.stdout.split('\n');
    expect(lines[0]).toBe('200 OK');
    expect(lines[1]).toBe(`amount      0.001 USDC on eip155:8453, to ${devnet.accounts.payTo.address}`);
    expect(lines[2]).toBe(`payer       ${payer.address}`);
    expect(lines[3]).toMatch(/^transaction 0x[0-9a-f]{64}$/);
    expect(JSON.parse(lines.slice(5).join('\n'))).toEqual({ ok: true, path: '/paid', run: 1 });
    expect(paid.stdout).not.toContain('402 challenge');
    expect(paid.stdout.length).toBeLessThan(600);
    expect(app.runs.get('/paid')).toBe(1);
    expect((await deltas(devnet, payer.address, before[0]!)).paid).toBe(PRICE);
  });

  it('adds the whole challenge, the signed authorization and the receipt with --verbose', async () => {
    expect(verbose.code).toBe(0);
    expect(verbose.stdout).toMatch(/^402 challenge:\n\{\n {2}"x402Version": 2/);
    expect(verbose.stdout).toContain(`signed payment: {"from":"${payerAccount(devnet, 2).address}"`);
    expect(verbose.stdout).toMatch(/\nreceipt:\n\{[\s\S]*"success": true/);
    expect((await deltas(devnet, payerAccount(devnet, 2).address, before[2]!)).paid).toBe(PRICE);
  });

  it('lists its exit codes in --help', async () => {
    const help = await tollboothPay(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Exit codes: 0 a 2xx answer, 1 .*2 bad arguments/s);
  });

  it('refuses a price above --max, exits 1 and pays nothing', async () => {
    const payer = payerAccount(devnet, 1);
    expect(tooDear.code).toBe(1);
    expect(tooDear.stderr).toContain('spend_limit_exceeded');
    expect(tooDear.stderr).toContain(
      'The price is 0.002 (USDC), above --max 1000: run again with --max 0.002 to pay it.',
    );
    expect(app.runs.get('/dear')).toBeUndefined();
    expect((await deltas(devnet, payer.address, before[1]!)).paid).toBe(0n);
  });

  it('says which --max pays a price above the default one (the analyst: 0.05)', async () => {
    expect(aboveDefault.code).toBe(1);
    expect(aboveDefault.stderr.trim().split('\n')).toEqual([
      'spend_limit_exceeded: the cheapest payable requirement (50000 atomic units) exceeds the spend limits',
      'The price is 0.05 (USDC), above --max 0.01 (the default): run again with --max 0.05 to pay it.',
    ]);
    expect(aboveDefault.stdout).toBe('');
    expect(app.runs.get('/analyst')).toBeUndefined();
    expect((await deltas(devnet, payerAccount(devnet, 1).address, before[1]!)).paid).toBe(0n);
  });

  it('exits 2 with the usage when the payer key is missing', () => {
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('TOLLBOOTH_PAYER_KEY');
    expect(noKey.stderr).toContain('usage: tollbooth-pay');
    expect(noKey.stdout).toBe('');
  });
});
