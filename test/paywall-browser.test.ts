// The browser paywall in headless Chromium, paying on the devnet: a page wallet (EIP-1193, signing
// with a devnet key in the test process) pays a Tollbooth-Express route; each failure case shows
// its message and moves no money; a lost settle answer (502) is retried with the same signed
// payment, also after a reload, and charged once. Machine clients (the official @x402/fetch
// client) still get JSON. The same page pays, and retries a lost settle answer, through the
// Fastify and Koa adapters too. One Chromium for the file.
import { join } from 'node:path';
import { decodeHeaderJson, type FacilitatorClient, type SettleResponse } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { generatePrivateKey } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium } from '../examples/fee-service/test/support/chromium';
import { installWallet, type WalletBehaviour } from './support/browser-wallet';
import {
  balances,
  deltas,
  devnetFacilitator,
  type Listening,
  PRICE,
  paidRoute,
  payerAccount,
  startTollboothApp,
  startTollboothOn,
} from './support/interop-harness';

/** Set SCREENSHOTS=1 to write the README's pictures (docs/images/). */
const SCREENSHOTS = process.env.SCREENSHOTS === '1';
const IMAGES = join(import.meta.dirname, '..', 'docs', 'images');

/** The in-process facilitator, except that the answers of the first `lose` settlements are lost after they landed. */
function losingSettleAnswers(
  inner: FacilitatorClient,
): FacilitatorClient & { lose: number; settles: number } {
  const wrapper = {
    lose: 0,
    settles: 0,
    verify: inner.verify.bind(inner),
    supported: inner.supported.bind(inner),
    async settle(...args: Parameters<FacilitatorClient['settle']>): Promise<SettleResponse> {
      wrapper.settles += 1;
      const receipt = await inner.settle(...args);
      if (wrapper.lose > 0) {
        wrapper.lose -= 1;
        throw new Error('socket hang up (the settle answer was lost)');
      }
      return receipt;
    },
  };
  return wrapper;
}

describe.runIf(chromiumAvailable)('the browser paywall in Chromium on the devnet', () => {
  let devnet: Devnet;
  let browser: Browser;
  let app: Listening & { runs: Map<string, number> };
  /** The same route and paywall behind the other two adapters. */
  const others: Record<'fastify' | 'koa', Listening & { runs: Map<string, number> }> = {} as never;
  let facilitator: ReturnType<typeof losingSettleAnswers>;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    [devnet, browser] = await Promise.all([startDevnet({ chainId: 8453, payers: 7 }), launchChromium()]);
    facilitator = losingSettleAnswers(devnetFacilitator(devnet));
    const options = {
      routes: { 'GET /paid': { ...paidRoute(devnet), description: 'A test answer' } },
      facilitator,
      paywall: {
        appName: 'Tollbooth test app',
        // The devnet runs Base's chain id: no explorer link, no public RPC to add.
        networks: { 'eip155:8453': { name: 'Base (local devnet)', explorerTxUrl: null, addChain: null } },
      },
    };
    [app, others.fastify, others.koa] = await Promise.all([
      startTollboothApp(devnet, options),
      startTollboothOn('fastify', devnet, options),
      startTollboothOn('koa', devnet, options),
    ]);
  });

  afterAll(async () => {
    await Promise.all(contexts.map((context) => context.close()));
    await browser?.close();
    await Promise.all([app?.close(), others.fastify?.close(), others.koa?.close()]);
    await devnet?.stop();
  });

  /** A fresh browser profile (own session storage) with a wallet, or none, on the paywall. */
  async function openPaywall(
    wallet?: Omit<WalletBehaviour, 'privateKey'> & { privateKey?: `0x${string}` },
    url = app.url,
  ) {
    const context = await browser.newContext({ viewport: { width: 900, height: 900 } });
    contexts.push(context);
    const log = wallet
      ? await installWallet(context, devnet, {
          privateKey: wallet.privateKey ?? devnet.accounts.payers[0]!.privateKey,
          ...wallet,
        })
      : undefined;
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      // The navigation's own 402 is logged by Chromium as a failed resource load.
      if (message.type() === 'error' && !message.text().includes('status of 402'))
        errors.push(message.text());
    });
    const response = await page.goto(`${url}/paid`);
    expect(response?.status()).toBe(402);
    expect(response?.headers()['content-type']).toBe('text/html; charset=utf-8');
    // The same challenge the page renders rides in the header, for a client that reads it.
    expect(decodeHeaderJson(response!.headers()['payment-required']!)).toMatchObject({
      x402Version: 2,
      resource: { url: `${url}/paid` },
      accepts: [expect.objectContaining({ scheme: 'exact', network: 'eip155:8453', amount: String(PRICE) })],
    });
    await page.waitForSelector('body[data-paywall-state="idle"]');
    return { page, log, errors };
  }

  const statusText = (page: Page) => page.textContent('#paywall-status');
  const waitForCode = (page: Page, code: string) =>
    page.waitForSelector(`#paywall-status[data-code="${code}"]`, { timeout: 30_000 });

  it('shows what is sold, the price and the network, and pays with the wallet: the answer and its transaction', async () => {
    const payer = payerAccount(devnet, 0).address;
    const before = await balances(devnet, payer);
    const { page, log, errors } = await openPaywall({ privateKey: devnet.accounts.payers[0]!.privateKey });
    const offer = await page.textContent('#paywall-offer');
    expect(offer).toContain('A test answer');
    expect(offer).toContain('$0.001');
    expect(offer).toContain('Base (local devnet)');
    expect(offer).toContain(devnet.accounts.payTo.address);
    if (SCREENSHOTS) await page.screenshot({ path: join(IMAGES, 'paywall.png'), fullPage: true });

    // Keyboard only: the button is reachable and pressed with Enter.
    await page.focus('#paywall-pay');
    await page.keyboard.press('Enter');
    await waitForCode(page, 'paid');
    const transaction = await page.textContent('#paywall-transaction');
    expect(transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await page.getAttribute('#paywall-transaction', 'href')).toBeNull();
    expect(await page.textContent('h1')).toBe('Paid');
    const onChain = await devnet.publicClient.getTransactionReceipt({ hash: transaction as `0x${string}` });
    expect(onChain.status).toBe('success');
    expect(JSON.parse((await page.textContent('#paywall-answer'))!)).toEqual({
      ok: true,
      path: '/paid',
      run: 1,
    });
    expect(await page.evaluate('document.activeElement.id')).toBe('paywall-result-heading');
    if (SCREENSHOTS) await page.screenshot({ path: join(IMAGES, 'paywall-paid.png'), fullPage: true });

    expect(log!.signatures).toBe(1);
    expect(await deltas(devnet, payer, before)).toEqual({ paid: PRICE, received: PRICE });
    expect(errors).toEqual([]);
  });

  it('says there is no wallet when the browser has none', async () => {
    const { page } = await openPaywall();
    await page.click('#paywall-pay');
    await waitForCode(page, 'no_wallet');
    expect(await statusText(page)).toMatch(/No browser wallet was found.*Nothing was paid/);
  });

  it('says the wallet is on the wrong chain, offers the switch, and pays once switched', async () => {
    const payer = payerAccount(devnet, 1).address;
    const before = await balances(devnet, payer);
    const { page, log } = await openPaywall({
      privateKey: devnet.accounts.payers[1]!.privateKey,
      chainId: 1,
    });
    await page.click('#paywall-pay');
    await waitForCode(page, 'wrong_chain');
    expect(await statusText(page)).toContain(
      'Your wallet is on Ethereum (chain 1), but this payment is on Base (local devnet) (chain 8453)',
    );
    expect(log!.signatures).toBe(0);
    expect(await deltas(devnet, payer, before)).toEqual({ paid: 0n, received: 0n });

    expect(await page.isVisible('#paywall-switch')).toBe(true);
    await page.click('#paywall-switch');
    await waitForCode(page, 'paid');
    expect(log!.requests).toContain('wallet_switchEthereumChain');
    expect(log!.signatures).toBe(1);
    expect(await deltas(devnet, payer, before)).toEqual({ paid: PRICE, received: PRICE });
  });

  it('says the switch was declined when the wallet refuses it', async () => {
    const { page, log } = await openPaywall({
      privateKey: devnet.accounts.payers[1]!.privateKey,
      chainId: 1,
      refuseSwitch: true,
    });
    await page.click('#paywall-pay');
    await waitForCode(page, 'wrong_chain');
    await page.click('#paywall-switch');
    await waitForCode(page, 'switch_refused');
    expect(log!.signatures).toBe(0);
  });

  it('says the signature was refused, and nothing moves', async () => {
    const payer = payerAccount(devnet, 2).address;
    const before = await balances(devnet, payer);
    const settles = facilitator.settles;
    const { page, log } = await openPaywall({
      privateKey: devnet.accounts.payers[2]!.privateKey,
      refuseSignature: true,
    });
    await page.click('#paywall-pay');
    await waitForCode(page, 'signature_refused');
    expect(await statusText(page)).toMatch(/You declined the signature.*Nothing was signed or paid/);
    expect(log!.requests).toContain('eth_signTypedData_v4');
    expect(facilitator.settles).toBe(settles);
    expect(await deltas(devnet, payer, before)).toEqual({ paid: 0n, received: 0n });
  });

  it('says the balance is too low before asking for a signature', async () => {
    const { page, log } = await openPaywall({ privateKey: generatePrivateKey() });
    await page.click('#paywall-pay');
    await waitForCode(page, 'insufficient_balance');
    expect(await statusText(page)).toMatch(
      /holds 0 USD Coin, and this costs 0\.001 USD Coin.*Nothing was signed or paid/,
    );
    expect(log!.requests).not.toContain('eth_signTypedData_v4');
  });

  it('says the balance is too low when the server refuses the payment for it (the wallet could not read it)', async () => {
    const { page, log } = await openPaywall({ privateKey: generatePrivateKey(), failReads: true });
    await page.click('#paywall-pay');
    await waitForCode(page, 'insufficient_balance');
    expect(await statusText(page)).toMatch(
      /The payment was refused: your account does not hold 0\.001 USD Coin.*Nothing was charged/,
    );
    expect(log!.signatures).toBe(1);
    // refused for good: the next press asks for a new signature
    expect(await page.isVisible('#paywall-retry')).toBe(false);
  });

  it('retries a 502 with the same signed payment, after a reload too, and charges once', async () => {
    const payer = payerAccount(devnet, 3).address;
    const before = await balances(devnet, payer);
    const settlesBefore = facilitator.settles;
    facilitator.lose = 1;
    const { page, log } = await openPaywall({ privateKey: devnet.accounts.payers[3]!.privateKey });
    await page.click('#paywall-pay');
    await waitForCode(page, 'settlement_uncertain');
    expect(await statusText(page)).toMatch(/HTTP 502, settlement_uncertain.*not asked to sign again/);
    expect(await page.isVisible('#paywall-retry')).toBe(true);
    expect(log!.signatures).toBe(1);

    // The signed payment survives a reload of the tab, and the retry sends it again.
    await page.reload();
    await waitForCode(page, 'pending_payment');
    await page.click('#paywall-retry');
    await waitForCode(page, 'paid');
    const transaction = (await page.textContent('#paywall-transaction')) as `0x${string}`;
    expect((await devnet.publicClient.getTransactionReceipt({ hash: transaction })).status).toBe('success');
    expect(log!.signatures).toBe(1);
    expect(facilitator.settles - settlesBefore).toBe(1);
    expect(await deltas(devnet, payer, before)).toEqual({ paid: PRICE, received: PRICE });
    expect(app.runs.get('/paid')).toBeGreaterThanOrEqual(1);
  });

  it.each([
    ['fastify', 5],
    ['koa', 6],
  ] as const)(
    'pays through the %s adapter too, retrying a lost settle answer with the same signed payment',
    async (framework, index) => {
      const target = others[framework];
      const payer = payerAccount(devnet, index).address;
      const before = await balances(devnet, payer);
      const settlesBefore = facilitator.settles;
      facilitator.lose = 1;
      const { page, log, errors } = await openPaywall(
        { privateKey: devnet.accounts.payers[index]!.privateKey },
        target.url,
      );
      expect(await page.textContent('#paywall-offer')).toContain('A test answer');
      await page.click('#paywall-pay');
      await waitForCode(page, 'settlement_uncertain');
      expect(log!.signatures).toBe(1);
      await page.click('#paywall-retry');
      await waitForCode(page, 'paid');
      const transaction = (await page.textContent('#paywall-transaction')) as `0x${string}`;
      expect((await devnet.publicClient.getTransactionReceipt({ hash: transaction })).status).toBe('success');
      expect(JSON.parse((await page.textContent('#paywall-answer'))!)).toMatchObject({
        ok: true,
        path: '/paid',
      });
      expect(log!.signatures).toBe(1);
      expect(facilitator.settles - settlesBefore).toBe(1);
      expect(target.runs.get('/paid')).toBeGreaterThanOrEqual(1);
      expect(await deltas(devnet, payer, before)).toEqual({ paid: PRICE, received: PRICE });
      // Chromium logs the lost settle answer as a failed load; nothing else went wrong.
      expect(errors).toEqual([expect.stringContaining('status of 502')]);
    },
  );

  it('gives machine clients JSON: the official @x402/fetch client pays the same route', async () => {
    const plain = await fetch(`${app.url}/paid`);
    expect(plain.status).toBe(402);
    expect(plain.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await plain.json()) as { x402Version: number }).x402Version).toBe(2);

    const payer = payerAccount(devnet, 4);
    const before = await balances(devnet, payer.address);
    const pay = wrapFetchWithPayment(fetch, new x402Client().register('eip155:*', new ExactEvmScheme(payer)));
    const response = await pay(`${app.url}/paid`, { headers: { accept: 'application/json' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const receipt = decodeHeaderJson(response.headers.get('payment-response')!) as SettleResponse;
    expect(receipt.success).toBe(true);
    expect(await deltas(devnet, payer.address, before)).toEqual({ paid: PRICE, received: PRICE });
  });
});
