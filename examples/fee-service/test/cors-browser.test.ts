// CORS as a browser enforces it: headless Chromium opens a page served from another origin (another
// port), whose script fetches the fee service. It reads a paid route's 402 and its PAYMENT-REQUIRED
// header, a free route's body, and — through a preflight, since PAYMENT-SIGNATURE is no safelisted
// header — the 400 refusing a malformed payment. A service that does not list the page's
// origin leaves the page nothing to read: fetch rejects.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningFeeService } from '../src/service';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';
import { chromiumAvailable, launchChromium } from './support/chromium';
import { removeScratch, startTestService } from './support/harness';

interface Read {
  ok: boolean;
  status?: number;
  challenge?: string | null;
  body?: string;
  error?: string;
}

describe.runIf(chromiumAvailable)(
  'a page on another origin fetching the fee service in Chromium',
  { timeout: 120_000 },
  () => {
    let simulator: MempoolSimulator;
    let pages: Server;
    let pageOrigin: string;
    let service: RunningFeeService;
    let closed: RunningFeeService;
    let browser: Browser;
    let page: Page;

    beforeAll(async () => {
      pages = createServer((_req, res) => {
        res
          .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
          .end('<!doctype html><title>app</title>');
      });
      await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
      pageOrigin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
      simulator = await startMempoolSimulator({ scenario: 'calm', seed: 11 });
      const env = {
        OBSERVATORY_ENABLED: 'false',
        FACILITATOR_URL: 'http://127.0.0.1:9',
        PAY_TO: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
      };
      [service, closed, browser] = await Promise.all([
        startTestService({ ...env, CORS_ORIGINS: pageOrigin }, { simulator }),
        startTestService({ ...env, CORS_ORIGINS: 'https://elsewhere.example' }, { simulator }),
        launchChromium(),
      ]);
      page = await browser.newPage();
      await page.goto(`${pageOrigin}/`);
    }, 120_000);

    afterAll(async () => {
      await browser?.close();
      await service?.close();
      await closed?.close();
      await simulator?.close();
      await new Promise((resolve) => pages?.close(resolve));
      removeScratch();
    });

    /** What the page's own `fetch` can read of an answer (browser code as text: no DOM types here). */
    const read = (url: string, headers: Record<string, string> = {}): Promise<Read> =>
      page.evaluate(`fetch(${JSON.stringify(url)}, { headers: ${JSON.stringify(headers)} }).then(
      async (response) => ({
        ok: true,
        status: response.status,
        challenge: response.headers.get('payment-required'),
        body: await response.text(),
      }),
      (error) => ({ ok: false, error: String(error) }),
    )`);

    it('reads a paid route 402 and its PAYMENT-REQUIRED challenge', async () => {
      const answer = await read(`${service.url}/api/v1/fees/now`);
      expect(answer).toMatchObject({ ok: true, status: 402 });
      const challenge = JSON.parse(Buffer.from(answer.challenge!, 'base64').toString('utf8'));
      expect(challenge.x402Version).toBe(2);
      expect(challenge.accepts[0]).toMatchObject({
        scheme: 'exact',
        payTo: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
      });
      expect(challenge.resource.url).toBe(`${service.url}/api/v1/fees/now`);
    });

    it("reads a free route's body", async () => {
      const answer = await read(`${service.url}/api/v1/fees/preview`);
      expect(answer).toMatchObject({ ok: true, status: 200, challenge: null });
      const preview = JSON.parse(answer.body!);
      expect(preview.data.fee_rates_sat_vb.fastest).toBeGreaterThan(0);
      expect(preview.data.paid_resource).toMatchObject({ method: 'GET' });
    });

    it('sends a PAYMENT-SIGNATURE after a preflight and reads the 400 refusing a malformed one', async () => {
      const answer = await read(`${service.url}/api/v1/fees/now`, { 'PAYMENT-SIGNATURE': 'not-base64!' });
      // A malformed payment is 400 with the reason in the Error body, and the challenge to pay with.
      expect(answer).toMatchObject({ ok: true, status: 400 });
      expect(JSON.parse(answer.body!).error.code).toBe('payment_header_invalid_base64');
      expect(answer.challenge).toMatch(/^eyJ/);
    });

    it('reads nothing from a service that does not list its origin', async () => {
      const answer = await read(`${closed.url}/api/v1/fees/preview`);
      expect(answer.ok).toBe(false);
      expect(answer.error).toMatch(/TypeError/);
    });
  },
);
