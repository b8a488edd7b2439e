// The fee dashboard (`GET /`) and the browser paywall of the fee service in headless Chromium: the
// service runs like `npm start` (its own simulator, a day of recorded history, the devnet), the
// browser may reach nothing but the service, and the page draws every chart from the service's
// own data, updates when the snapshot changes, reads on a phone, and meets basic accessibility.
// From its link to the paid decision, a page wallet signing with a devnet key pays, and the page
// shows the decision with its transaction hash. One Chromium for the file.
import { join } from 'node:path';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installWallet } from '../../../test/support/browser-wallet';
import type { RunningFeeService } from '../src/service';
import { chromiumAvailable, drawnFigures, launchChromium } from './support/chromium';
import { assertFeeDecision } from './support/contract-schemas';
import { balanceOf, type JsonBody, removeScratch, startTestService } from './support/harness';

/** Set SCREENSHOTS=1 to write the README's pictures (docs/images/). */
const SCREENSHOTS = process.env.SCREENSHOTS === '1';
const IMAGES = join(import.meta.dirname, '..', '..', '..', 'docs', 'images');

// A hang guard, not a speed check: alone each test takes 5-40 s, but a shared machine at a load
// of ~45 on 2 CPUs took the paying one past the default 60 s.
describe.runIf(chromiumAvailable)(
  'the fee dashboard and the paywall in Chromium',
  { timeout: 180_000 },
  () => {
    let devnet: Devnet;
    let service: RunningFeeService;
    let browser: Browser;
    const contexts: BrowserContext[] = [];

    beforeAll(async () => {
      [devnet, browser] = await Promise.all([startDevnet({ payers: 1 }), launchChromium()]);
      // Its own simulator, run forward from 25 simulated hours ago: a day of blocks and scores.
      service = await startTestService({ SIMULATOR_HISTORY_HOURS: '25' }, { devnet });
    }, 180_000);

    afterAll(async () => {
      await Promise.all(contexts.map((context) => context.close()));
      await browser?.close();
      await service?.close();
      await devnet?.stop();
      removeScratch();
    });

    /**
     * A page in a fresh profile that may reach the service and nothing else: any other request is
     * aborted and recorded (the dashboard must work with no internet).
     */
    async function openPage(options: { width?: number; clock?: boolean } = {}) {
      const context = await browser.newContext({ viewport: { width: options.width ?? 1100, height: 900 } });
      contexts.push(context);
      const elsewhere: string[] = [];
      const origin = new URL(service.url).origin;
      await context.route('**/*', (route) => {
        const url = route.request().url();
        if (url.startsWith(origin) || url.startsWith('data:')) return route.continue();
        elsewhere.push(url);
        return route.abort();
      });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      page.on('console', (message) => {
        if (message.type() === 'error' && !message.text().includes('status of 402'))
          errors.push(message.text());
      });
      if (options.clock) await page.clock.install();
      return { context, page, errors, elsewhere };
    }

    async function openDashboard(options: { width?: number; clock?: boolean } = {}) {
      const opened = await openPage(options);
      const response = await opened.page.goto(`${service.url}/`);
      expect(response?.status()).toBe(200);
      expect(response?.headers()['content-type']).toBe('text/html; charset=utf-8');
      // A script error fails the test at once rather than at the wait's timeout.
      await Promise.race([
        opened.page.waitForSelector('body[data-state="live"]'),
        new Promise((_, reject) => opened.page.once('pageerror', reject)),
      ]);
      return opened;
    }

    it('draws the fee bands, the projected blocks, the block percentiles and the scoreboard from the service alone', async () => {
      const { page, errors, elsewhere } = await openDashboard();
      const figures = await drawnFigures(page);
      // fee bands, projected blocks, block percentiles, hit rate of the chosen horizon
      expect(figures.drawn).toBe(4);
      expect(figures.charts).toBe(4);
      expect(figures.inkPerCanvas).toHaveLength(4);
      for (const ink of figures.inkPerCanvas) expect(ink).toBeGreaterThan(1000);
      // percentiles: p90, p75, p50, p25, p10; projected: highest, median, lowest; one per estimator
      expect(figures.legendRows).toBeGreaterThanOrEqual(1 + 3 + 5 + 2);

      // The figures are the service's own: the tiers of the free preview, the same snapshot.
      const preview = (await (await fetch(`${service.url}/api/v1/fees/preview`)).json()) as JsonBody;
      const fastest = `${Number(preview['data']['fee_rates_sat_vb']['fastest']).toLocaleString('en', { maximumFractionDigits: 1 })} sat/vB`;
      expect(await page.textContent('#tiers .tier-rate')).toBe(fastest);
      expect(await page.textContent('#live')).toMatch(/^Snapshot \d+ s old: fresh$/);
      expect(await page.locator('#projected-table tbody tr').count()).toBeGreaterThan(0);
      expect(await page.locator('#score-table tbody tr').count()).toBeGreaterThan(1);
      expect(await page.textContent('#blocks-line')).toMatch(/^\d+ blocks up to \d+/);

      // Every paid resource of the registry with its price; the active GET ones are links.
      const rows = await page.locator('#resource-table tbody tr').allTextContents();
      expect(rows).toHaveLength(service.publications.length);
      expect(rows.find((row) => row.includes('GET /api/v1/fees/now'))).toContain('0.001 USDC');
      expect(await page.getAttribute('#resource-table a[href$="/api/v1/fees/now"]', 'href')).toBe(
        `${service.baseUrl}/api/v1/fees/now`,
      );
      expect(await page.locator('#discovery-links a').count()).toBe(3);

      const screenshot = await page.screenshot({ fullPage: true });
      expect(screenshot.length).toBeGreaterThan(60_000);
      if (SCREENSHOTS) await page.screenshot({ path: join(IMAGES, 'dashboard.png'), fullPage: true });
      expect(elsewhere).toEqual([]);
      expect(errors).toEqual([]);
    });

    it('updates live: a new snapshot is drawn at the next poll, and unchanged polls get 304', async () => {
      const { page } = await openDashboard({ clock: true });
      const before = await page.getAttribute('body', 'data-generated-at');
      const digestBefore = await page.textContent('#snapshot-line');
      // Unchanged data: the poll is answered 304 and the page keeps what it drew.
      const statuses: number[] = [];
      page.on('response', (response) => {
        if (response.url().endsWith('/dashboard/data')) statuses.push(response.status());
      });
      await page.clock.runFor(10_500);
      await page.waitForSelector('body[data-polls="1"]');

      // Two simulated minutes of arrivals: a new mempool, a new snapshot.
      service.simulator!.advance(120_000);
      expect((await service.snapshots.poll()).ok).toBe(true);
      await page.clock.runFor(10_500);
      await page.waitForFunction((old) => document.body.getAttribute('data-generated-at') !== old, before);
      expect(await page.textContent('#snapshot-line')).not.toBe(digestBefore);
      expect(statuses[0]).toBe(200); // the page's embedded copy has no ETag yet
      expect(statuses.at(-1)).toBe(200);

      await page.clock.runFor(10_500);
      await page.waitForSelector('body[data-polls="3"]');
      expect(statuses.at(-1)).toBe(304);
      expect(await drawnFigures(page)).toMatchObject({ drawn: 4, charts: 4 });
    });

    it('reads on a phone-width screen (390 px): one column, no table cut off, the bars from zero', async () => {
      const { page } = await openDashboard({ width: 390 });
      const seen = (await page.evaluate(`(() => ({
      page: document.scrollingElement.scrollWidth,
      charts: [...document.querySelectorAll('.uplot')].map((chart) => chart.getBoundingClientRect().right),
      // each table and the box holding it: a table wider than its box is cut off behind a scroll
      tables: [...document.querySelectorAll('.table-wrap > table')].map((table) => {
        const box = table.parentElement;
        const rect = table.getBoundingClientRect();
        return { id: table.id, rows: table.querySelectorAll('tbody tr').length, left: rect.left, right: rect.right,
          tableScroll: table.scrollWidth, tableClient: table.clientWidth,
          boxScroll: box.scrollWidth, boxClient: box.clientWidth,
          cellsRight: Math.max(...[...table.querySelectorAll('td')].map((td) => td.getBoundingClientRect().right)) };
      }),
      bars: document.getElementById('chart-bands').getAttribute('data-y-range'),
    }))()`)) as {
        page: number;
        charts: number[];
        tables: Array<Record<string, number> & { id: string }>;
        bars: string | null;
      };
      expect(seen.page).toBeLessThanOrEqual(390);
      for (const right of seen.charts) expect(right).toBeLessThanOrEqual(390);
      expect(seen.tables.map((t) => t.id).sort()).toEqual([
        'projected-table',
        'resource-table',
        'score-table',
      ]);
      for (const table of seen.tables) {
        expect(table.rows, table.id).toBeGreaterThan(0);
        expect(table.left, table.id).toBeGreaterThanOrEqual(0);
        expect(table.right, table.id).toBeLessThanOrEqual(390);
        expect(table.cellsRight, table.id).toBeLessThanOrEqual(390);
        expect(table.boxScroll, table.id).toBeLessThanOrEqual(table.boxClient);
        expect(table.tableScroll, table.id).toBeLessThanOrEqual(table.tableClient);
      }
      // the mempool's bars: the value axis starts at zero
      expect(seen.bars).toMatch(/^0,\d/);
      const screenshot = await page.screenshot({ fullPage: true });
      expect(screenshot.length).toBeGreaterThan(30_000);
      if (SCREENSHOTS) await page.screenshot({ path: join(IMAGES, 'dashboard-phone.png'), fullPage: false });
    });

    it('meets basic accessibility: labelled charts and controls, keyboard use, text contrast of at least 4.5:1', async () => {
      const { page } = await openDashboard();
      const facts = (await page.evaluate(`(() => {
      const luminance = (rgb) => {
        const [r, g, b] = rgb.match(/\\d+/g).slice(0, 3).map(Number).map((v) => {
          const c = v / 255;
          return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
        });
        return 0.2126 * r + 0.7152 * g + 0.0722 * b;
      };
      const background = (node) => {
        for (let n = node; n; n = n.parentElement) {
          const colour = getComputedStyle(n).backgroundColor;
          if (colour !== 'rgba(0, 0, 0, 0)' && colour !== 'transparent') return colour;
        }
        return 'rgb(255, 255, 255)';
      };
      const contrast = (node) => {
        const a = luminance(getComputedStyle(node).color);
        const b = luminance(background(node));
        return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
      };
      const texts = [...document.querySelectorAll('h1, h2, p, th, td, .tier span, a, button, label')]
        .filter((n) => n.textContent.trim() && n.getClientRects().length > 0);
      return {
        lowest: Math.min(...texts.map(contrast)),
        checked: texts.length,
        unlabelledCharts: [...document.querySelectorAll('.chart')]
          .filter((n) => n.getAttribute('role') !== 'img' || !(n.getAttribute('aria-label') || n.getAttribute('aria-labelledby'))).length,
        selectLabel: document.querySelector('label[for="horizon"]')?.textContent,
        lang: document.documentElement.lang,
      };
    })()`)) as {
        lowest: number;
        checked: number;
        unlabelledCharts: number;
        selectLabel: string;
        lang: string;
      };
      expect(facts.checked).toBeGreaterThan(50);
      expect(facts.lowest).toBeGreaterThanOrEqual(4.5);
      expect(facts.unlabelledCharts).toBe(0);
      expect(facts.selectLabel).toBe('Horizon');
      expect(facts.lang).toBe('en');

      // Keyboard: the skip link comes first, the pause button toggles with the keyboard, the
      // horizon select changes the scoreboard.
      await page.keyboard.press('Tab');
      expect(await page.evaluate('document.activeElement.className')).toBe('skip');
      await page.focus('#pause');
      await page.keyboard.press('Enter');
      expect(await page.getAttribute('#pause', 'aria-pressed')).toBe('true');
      expect(await page.textContent('#updated')).toBe('Updates paused.');
      await page.keyboard.press('Space');
      expect(await page.getAttribute('#pause', 'aria-pressed')).toBe('false');
      const firstTitle = await page.textContent('#chart-hit .u-title');
      await page.focus('#horizon');
      await page.keyboard.press('ArrowDown');
      await page.waitForFunction(
        (title) => document.querySelector('#chart-hit .u-title')?.textContent !== title,
        firstTitle,
      );
    });

    it('links the paid decision to its paywall, which pays on the devnet and shows the decision and its transaction', async () => {
      const { context, page, elsewhere } = await openDashboard();
      const payer = devnet.accounts.payers[0]!;
      const wallet = await installWallet(context, devnet, { privateKey: payer.privateKey });
      const before = await balanceOf(devnet, payer.address);
      await page.reload();
      await page.click('#signal-body a');
      await page.waitForSelector('body[data-paywall-state="idle"]');
      expect(await page.textContent('#paywall-offer')).toContain('$0.001');
      expect(await page.textContent('#paywall-offer')).toContain('local devnet');
      await page.click('#paywall-pay');
      await page.waitForSelector('#paywall-status[data-code="paid"]', { timeout: 30_000 });
      const decision = JSON.parse((await page.textContent('#paywall-answer'))!) as JsonBody;
      assertFeeDecision(decision);
      const transaction = await page.textContent('#paywall-transaction');
      expect(transaction).toBe(decision['meta']['payment']['transaction_hash']);
      const receipt = await devnet.publicClient.getTransactionReceipt({ hash: transaction as `0x${string}` });
      expect(receipt.status).toBe('success');
      expect(wallet.signatures).toBe(1);
      expect(await balanceOf(devnet, payer.address)).toBe(before - 1000n);
      if (SCREENSHOTS) await page.screenshot({ path: join(IMAGES, 'paywall-decision.png'), fullPage: true });
      expect(elsewhere).toEqual([]);
    });
  },
);
