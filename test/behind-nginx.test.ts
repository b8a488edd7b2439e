// GitHub issue 34, part 2: the fee service behind a real nginx with its default buffers, set up as
// docs/production.md says, paid on every paid route by each of the project's paying clients and by
// the official one: the browser paywall in headless Chromium (every GET route: a navigation), the
// `tollbooth-pay` command and the official @x402/fetch client (every route, the POST broadcast
// too). Each payment gets its 200 through the proxy, its PAYMENT-SIGNATURE as nginx received it
// stays under 4 KB — the paywall builds it from the compact challenge of PAYMENT-REQUIRED, as the
// others do — and each payer is charged exactly the prices asked. One fee service, one nginx, one
// browser; docs/production.md#the-size-of-a-payment states the sizes this measures.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { decodeHeaderJson, type PaymentRequired } from '@tollbooth/core';
import { fetchResponseHead } from '@tollbooth/core/testing';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import type { Browser, BrowserContext } from 'playwright-core';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPaid } from '../examples/fee-service/src/resources/kit';
import { RESOURCES } from '../examples/fee-service/src/resources/registry';
import type { RunningFeeService } from '../examples/fee-service/src/service';
import { type MempoolSimulator, startMempoolSimulator } from '../examples/fee-service/src/simulator/server';
import { faucetSpend } from '../examples/fee-service/test/fixtures/raw-tx';
import { chromiumAvailable, launchChromium } from '../examples/fee-service/test/support/chromium';
import { balanceOf, removeScratch, startTestService } from '../examples/fee-service/test/support/harness';
import { judgeNextBlock } from '../examples/fee-service/test/support/observatory';
import { installWallet } from './support/browser-wallet';
import {
  freePort,
  nginxAvailable,
  type ProxiedRequest,
  type RunningNginx,
  startNginx,
} from './support/nginx';

/** What the paying clients keep to (docs/production.md#the-size-of-a-payment). */
const MAX_PAYMENT_SIGNATURE = 4096;
/** What Chromium sends for a navigation. */
const BROWSER_ACCEPT =
  'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
const CLI = join(import.meta.dirname, '..', 'packages', 'fetch', 'src', 'cli.ts');

interface PaidRoute {
  method: 'GET' | 'POST';
  /** Path and query, as a client asks for it. */
  target: string;
}

let devnet: Devnet;
let simulator: MempoolSimulator;
let service: RunningFeeService;
let nginx: RunningNginx;
let browser: Browser;
let routes: PaidRoute[];
const contexts: BrowserContext[] = [];

/** Every paid resource of the service with parameters it serves: one target per route. */
async function paidRoutes(): Promise<PaidRoute[]> {
  const sim = (path: string) => fetch(`${simulator.url}${path}`);
  const tipHeight = await (await sim('/api/blocks/tip/height')).text();
  const [txid] = (await (await sim('/api/mempool/txids')).json()) as string[];
  const question = `?q=${encodeURIComponent('Why are fees high right now?')}`;
  return RESOURCES.filter(isPaid).map((resource) => {
    let target = resource.path.replace(':txid', txid!).replace(':hash_or_height', tipHeight);
    if (target.endsWith('/ai/chat') || target.endsWith('/analyst')) target += question;
    return { method: resource.method as PaidRoute['method'], target };
  });
}

/** A broadcast body the simulator accepts once: a fresh faucet output per payment. */
let faucetOutput = 40;
const broadcastBody = () =>
  JSON.stringify({ hex: faucetSpend(simulator.model, { output: faucetOutput++ }).hex });

/** The amount a route asks for, from its live challenge through the proxy. */
async function priceOf(route: PaidRoute): Promise<bigint> {
  // The broadcast checks its body before any challenge: it is asked with a valid one.
  const answer = await fetch(`${nginx.url}${route.target}`, {
    method: route.method,
    ...(route.method === 'POST'
      ? {
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ hex: faucetSpend(simulator.model, { output: 0 }).hex }),
        }
      : {}),
  });
  expect(answer.status, `${route.method} ${route.target}: ${await answer.clone().text()}`).toBe(402);
  const challenge = decodeHeaderJson(answer.headers.get('payment-required')!) as PaymentRequired;
  return BigInt(challenge.accepts[0]!.amount);
}

/** The paid requests nginx logged since `from`: each with its status and its header's length. */
function paymentsSince(from: number): Array<{ target: string; status: number; bytes: number }> {
  return nginx
    .requests()
    .slice(from)
    .filter((r: ProxiedRequest) => r.paymentSignature !== '')
    .map((r) => ({ target: r.uri, status: r.status, bytes: r.paymentSignature.length }));
}

/** Checks that every route was paid once with a 200 through nginx, each header under the limit. */
function expectPaidOnce(from: number, targets: readonly string[]) {
  const payments = paymentsSince(from);
  expect(payments.map((p) => p.target).sort()).toEqual([...targets].sort());
  for (const payment of payments) {
    expect(payment.status, payment.target).toBe(200);
    expect(payment.bytes, payment.target).toBeLessThan(MAX_PAYMENT_SIGNATURE);
  }
  return Math.max(...payments.map((p) => p.bytes));
}

function tollboothPay(args: string[], key: string) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ['--conditions=tollbooth-source', '--import', 'tsx', CLI, ...args],
      { env: { ...process.env, TOLLBOOTH_PAYER_KEY: key }, timeout: 120_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
    );
  });
}

describe.runIf(chromiumAvailable && nginxAvailable)(
  'the fee service behind nginx with default buffers',
  () => {
    beforeAll(async () => {
      [devnet, simulator, browser] = await Promise.all([
        startDevnet({ payers: 3 }),
        startMempoolSimulator({ scenario: 'calm', seed: 7 }),
        launchChromium(),
      ]);
      const port = await freePort();
      service = await startTestService(
        {
          PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
          TRUST_PROXY: 'true',
          RATE_LIMIT_ENABLED: 'false',
          AI_RATE_LIMIT_MAX: '100000',
          AI_ANALYST_BUDGET_MS: '120000',
        },
        { devnet, simulator },
      );
      // A scoreboard with nothing judged is not sold (404 no_data before any challenge).
      await judgeNextBlock(service, simulator);
      nginx = await startNginx({ port, upstreamPort: Number(new URL(service.url).port) });
      routes = await paidRoutes();
    });

    afterAll(async () => {
      await Promise.all(contexts.map((context) => context.close()));
      await browser?.close();
      await nginx?.stop();
      await service?.close();
      await Promise.all([devnet?.stop(), simulator?.close()]);
      removeScratch();
    });

    it('passes the 402 of every paid route, the paywall page’s too, within its default buffers', async () => {
      expect(routes.length).toBeGreaterThanOrEqual(12);
      for (const route of routes) expect(await priceOf(route)).toBeGreaterThan(0n);
      for (const route of routes.filter((r) => r.method === 'GET')) {
        // The page's head adds its Content-Security-Policy and friends to the challenge's.
        const head = await fetchResponseHead(`${nginx.url}${route.target}`, {
          headers: { accept: BROWSER_ACCEPT },
        });
        expect(head.status, route.target).toBe(402);
        expect(head.header('content-type'), route.target).toBe('text/html; charset=utf-8');
        expect(head.bytes, route.target).toBeLessThanOrEqual(4096);
      }
      expect(nginx.errors()).not.toMatch(/too big|too large/i);
    });

    it('pays every GET route from the browser paywall, each PAYMENT-SIGNATURE under 4 KB', async () => {
      const gets = routes.filter((r) => r.method === 'GET');
      const payer = devnet.accounts.payers[0]!;
      const prices = await Promise.all(gets.map(priceOf));
      const before = await balanceOf(devnet, payer.address);
      const context = await browser.newContext();
      contexts.push(context);
      const wallet = await installWallet(context, devnet, { privateKey: payer.privateKey });
      const page = await context.newPage();
      const from = nginx.requests().length;
      for (const route of gets) {
        const navigation = await page.goto(`${nginx.url}${route.target}`);
        expect(navigation?.status(), route.target).toBe(402);
        await page.waitForSelector('body[data-paywall-state="idle"]');
        await page.click('#paywall-pay');
        const state = await page.waitForSelector(
          'body[data-paywall-state="paid"], body[data-paywall-state="error"]',
          {
            timeout: 60_000,
          },
        );
        expect(
          await state.getAttribute('data-paywall-state'),
          `${route.target}: ${await page.textContent('#paywall-status')}`,
        ).toBe('paid');
      }
      expect(wallet.signatures).toBe(gets.length);
      expectPaidOnce(
        from,
        gets.map((r) => r.target),
      );
      expect(await balanceOf(devnet, payer.address)).toBe(before - prices.reduce((a, b) => a + b, 0n));
    }, 240_000);

    it('pays every route with tollbooth-pay, each PAYMENT-SIGNATURE under 4 KB', async () => {
      const payer = devnet.accounts.payers[1]!;
      const prices = await Promise.all(routes.map(priceOf));
      const before = await balanceOf(devnet, payer.address);
      const from = nginx.requests().length;
      // Each run compiles the sources in its own process: three at a time.
      const runs: Array<Awaited<ReturnType<typeof tollboothPay>>> = [];
      for (let i = 0; i < routes.length; i += 3) {
        runs.push(
          ...(await Promise.all(
            routes
              .slice(i, i + 3)
              .map((route) =>
                tollboothPay(
                  [
                    `${nginx.url}${route.target}`,
                    '--max',
                    '0.1',
                    ...(route.method === 'POST'
                      ? ['-d', broadcastBody(), '-H', 'content-type: application/json']
                      : []),
                  ],
                  payer.privateKey,
                ),
              ),
          )),
        );
      }
      for (const [i, run] of runs.entries())
        expect(run.code, `${routes[i]!.target}: ${run.stdout}${run.stderr}`).toBe(0);
      expectPaidOnce(
        from,
        routes.map((r) => r.target),
      );
      expect(await balanceOf(devnet, payer.address)).toBe(before - prices.reduce((a, b) => a + b, 0n));
    }, 240_000);

    it('pays every route with the official @x402/fetch, each PAYMENT-SIGNATURE under 4 KB', async () => {
      const payer = devnet.accounts.payers[2]!;
      const pay = wrapFetchWithPayment(
        fetch,
        new x402Client().register('eip155:*', new ExactEvmScheme(privateKeyToAccount(payer.privateKey))),
      );
      const prices = await Promise.all(routes.map(priceOf));
      const before = await balanceOf(devnet, payer.address);
      const from = nginx.requests().length;
      for (const route of routes) {
        const response = await pay(`${nginx.url}${route.target}`, {
          method: route.method,
          ...(route.method === 'POST'
            ? { headers: { 'content-type': 'application/json' }, body: broadcastBody() }
            : {}),
        });
        expect(response.status, `${route.target}: ${await response.clone().text()}`).toBe(200);
      }
      expectPaidOnce(
        from,
        routes.map((r) => r.target),
      );
      expect(await balanceOf(devnet, payer.address)).toBe(before - prices.reduce((a, b) => a + b, 0n));
    }, 240_000);
  },
);
