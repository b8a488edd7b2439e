import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`; `.ci/run` installs it). */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Whether browser tests can run here; under CI they must (a missing browser fails them). */
export const chromiumAvailable = existsSync(CHROMIUM_PATH) || process.env.CI === 'true';
if (!chromiumAvailable) {
  console.warn(`[browser tests] skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install -y chromium)`);
}

/**
 * Launches headless Chromium (Playwright gives it a fresh temporary profile) with the flags that
 * keep it off the network: background requests would only fail where there is none.
 */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

/** What the browser drew: charts, canvases and, per canvas, pixels that are neither blank nor white. */
export async function drawnFigures(
  page: Page,
): Promise<{ drawn: number; charts: number; legendRows: number; inkPerCanvas: number[] }> {
  // Browser code as text: this project's TypeScript has no DOM types.
  return page.evaluate(`(() => ({
    drawn: Number(document.body.getAttribute('data-charts-drawn')),
    charts: document.querySelectorAll('.uplot').length,
    // the first legend row of a chart is its x (time) value
    legendRows: document.querySelectorAll('.u-legend .u-series:not(:first-child)').length,
    inkPerCanvas: [...document.querySelectorAll('canvas')].map((canvas) => {
      const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
      let ink = 0;
      for (let i = 0; i < data.length; i += 4) {
        if (data[i + 3] > 0 && (data[i] < 200 || data[i + 1] < 200 || data[i + 2] < 200)) ink += 1;
      }
      return ink;
    }),
  }))()`);
}
