import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, drawnFigures, launchChromium } from '../../test/support/chromium';
import { type LineChart, renderChartPage } from './page';

const chart = (id: string, values: (number | null)[][]): LineChart => ({
  id,
  title: `chart ${id}`,
  x: values[0]!.map((_, i) => 1_790_000_000 + i * 3600),
  series: values.map((v, i) => ({ label: `source ${i}`, values: v })),
  yLabel: 'hit rate',
  yRange: [0, 1],
  yFormat: 'percent',
});

describe('renderChartPage', () => {
  it('refuses a series whose length differs from its x values', () => {
    expect(() =>
      renderChartPage({
        title: 't',
        sections: [{ heading: 'h', charts: [{ ...chart('a', [[0.5]]), x: [1, 2] }] }],
      }),
    ).toThrow(/1 values for 2 x/);
  });

  it('inlines the chart library and keeps embedded data from closing its script element', () => {
    const html = renderChartPage({
      title: 'A </script> title',
      sections: [{ heading: 'h', charts: [{ ...chart('a', [[0.5, null]]), title: '</script><b>' }] }],
    });
    expect(html).toContain('var uPlot=');
    expect(html).not.toMatch(/https?:\/\/[^"' ]+\.(js|css)/);
    expect(html.match(/<\/script>/g)).toHaveLength(3);
    expect(html).toContain('A &#60;/script&#62; title');
  });
});

describe.runIf(chromiumAvailable)('a chart page in headless Chromium', () => {
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  const dir = mkdtempSync(join(tmpdir(), 'tollbooth-charts-'));
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('draws every chart, with a legend row per series and lines on each canvas, from a file with no network', async () => {
    const file = join(dir, 'page.html');
    writeFileSync(
      file,
      renderChartPage({
        title: 'Charts',
        sections: [
          {
            heading: 'one',
            charts: [
              chart('a', [
                [0.2, 0.5, 0.9],
                [0.9, null, 0.1],
              ]),
            ],
          },
          { heading: 'two', charts: [chart('b', [[0.3, 0.4, 0.5]])] },
        ],
      }),
    );
    const page = await browser.newPage();
    const failed: string[] = [];
    page.on('requestfailed', (request) => failed.push(request.url()));
    page.on('pageerror', (error) => failed.push(error.message));
    await page.goto(pathToFileURL(file).href);
    await page.waitForSelector('body[data-charts-drawn]');
    const figures = await drawnFigures(page);
    expect(figures).toMatchObject({ drawn: 2, charts: 2, legendRows: 3 });
    // uPlot draws series and axes on one canvas per chart
    expect(figures.inkPerCanvas).toHaveLength(2);
    for (const ink of figures.inkPerCanvas) expect(ink).toBeGreaterThan(500);
    expect((await page.screenshot({ fullPage: true })).length).toBeGreaterThan(20_000);
    expect(failed).toEqual([]);
    await page.close();
  });
});
