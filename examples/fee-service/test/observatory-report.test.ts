// `npm run observatory:report -- --simulate` writes a page that a real headless Chromium draws:
// the scoreboard table and two charts (hit rate, overpayment) per horizon, with no network.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, drawnFigures, launchChromium } from './support/chromium';

const workspace = join(import.meta.dirname, '..');
const scratch = mkdtempSync(join(tmpdir(), 'observatory-report-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function runReport(args: string[]): Promise<{ code: number | null; output: string }> {
  const scripts = JSON.parse(readFileSync(join(workspace, 'package.json'), 'utf8')).scripts as Record<
    string,
    string
  >;
  const [command, ...rest] = scripts['observatory:report']!.split(' ');
  const child = spawn(command!, [...rest, ...args], { cwd: workspace, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

describe('observatory:report', () => {
  it('refuses bad options with every problem at once', async () => {
    const { code, output } = await runReport(['--hours', '0', '--scenario', 'storm']);
    expect(code).toBe(2);
    expect(output).toMatch(/--hours must be a whole number 1…720/);
    expect(output).toMatch(/--scenario must be one of/);
  });

  it.runIf(chromiumAvailable)(
    'writes a report of simulated blocks that headless Chromium draws: a table and two charts per horizon',
    async () => {
      const out = join(scratch, 'report.html');
      const { code, output } = await runReport(['--simulate', '--blocks', '12', '--out', out]);
      expect(code, output).toBe(0);
      const browser = await launchChromium();
      try {
        const page = await browser.newPage();
        const failed: string[] = [];
        page.on('requestfailed', (request) => failed.push(request.url()));
        page.on('pageerror', (error) => failed.push(error.message));
        await page.goto(pathToFileURL(out).href);
        await page.waitForSelector('body[data-charts-drawn]');
        const figures = await drawnFigures(page);
        const horizons = await page.locator('section').count();
        // mempool.space (1, 3, 6, 144), Esplora and Core (1, 2, 3, 6, 12, 24, 144): 7 horizons
        expect(horizons).toBe(7);
        expect(figures.charts).toBe(2 * horizons);
        expect(figures.drawn).toBe(2 * horizons);
        // target 1: four sources in its table and in each of its two charts' legends
        expect(
          await page.locator('section').first().locator('table:not(.u-legend) > tbody > tr').count(),
        ).toBe(4);
        expect(figures.legendRows).toBeGreaterThanOrEqual(2 * 4 + 12 * 3);
        const inked = figures.inkPerCanvas.filter((ink) => ink > 500);
        expect(inked.length).toBe(figures.charts);
        expect(failed).toEqual([]);
      } finally {
        await browser.close();
      }
    },
    120_000,
  );
});
