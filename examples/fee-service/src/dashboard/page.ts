import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { chartAssets, escapeHtml, SERIES_COLOURS, scriptJsonText } from '../charts/page';
import { errorResult } from '../http/respond';
import type { RouteContext, RouteResult, ServiceRoute } from '../http/types';
import type { DashboardSource } from './data';

/**
 * The fee dashboard at `GET /` (free): one HTML page whose script and styles, uPlot included,
 * are served by the service itself (`/dashboard/assets/…`), so it works with no internet. The
 * page shows the document of `GET /dashboard/data` and polls it (see `browser/dashboard.js`, which
 * reads its helpers and charts from `browser/dashboard-dom.js` and `browser/dashboard-charts.js`).
 */

interface Asset {
  name: string;
  type: string;
  body: Buffer;
  /** Content hash: in the page's asset URLs (so they can be cached for good) and the ETag. */
  version: string;
}

function asset(name: string, type: string, text: string): Asset {
  const body = Buffer.from(text, 'utf8');
  return { name, type, body, version: createHash('sha256').update(body).digest('hex').slice(0, 16) };
}

let assets: Map<string, Asset> | undefined;

/** The page's files, read once: its own scripts and stylesheet, and uPlot's from the package. */
export function dashboardAssets(): Map<string, Asset> {
  if (!assets) {
    const { script, css } = chartAssets();
    const own = (file: string) => readFileSync(new URL(`./browser/${file}`, import.meta.url), 'utf8');
    assets = new Map(
      [
        asset('uplot.js', 'text/javascript; charset=utf-8', script),
        asset('uplot.css', 'text/css; charset=utf-8', css),
        asset('dashboard-dom.js', 'text/javascript; charset=utf-8', own('dashboard-dom.js')),
        asset('dashboard-charts.js', 'text/javascript; charset=utf-8', own('dashboard-charts.js')),
        asset('dashboard.js', 'text/javascript; charset=utf-8', own('dashboard.js')),
        asset('dashboard.css', 'text/css; charset=utf-8', own('dashboard.css')),
      ].map((a) => [a.name, a]),
    );
  }
  return assets;
}

/** The page may run only the service's own files and talk only to the service. */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The dashboard page with the current document embedded (the first paint needs no request). */
export function renderDashboardPage(options: { title: string; dataText: string }): string {
  const files = dashboardAssets();
  const href = (name: string) => `/dashboard/assets/${name}?v=${files.get(name)!.version}`;
  const section = (id: string, heading: string, body: string) =>
    `<section id="${id}" aria-labelledby="${id}-heading"><h2 id="${id}-heading">${heading}</h2>${body}</section>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(options.title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${href('uplot.css')}">
<link rel="stylesheet" href="${href('dashboard.css')}">
</head>
<body data-state="loading">
<a class="skip" href="#main">Skip to the figures</a>
<header>
<h1>${escapeHtml(options.title)}</h1>
<p id="live" role="status" aria-live="polite"></p>
<p class="controls"><button type="button" id="pause" aria-pressed="false">Pause live updates</button> <span id="updated"></span></p>
</header>
<main id="main">
${section('rates', 'Fee rates now', '<div id="tiers" class="tiers"></div><p id="snapshot-line" class="note"></p>')}
${section('signal', 'Send or wait', '<div id="signal-body"></div>')}
${section('mempool', 'Mempool by fee rate', '<p id="mempool-line"></p><div class="chart" id="chart-bands" role="img" aria-labelledby="mempool-heading mempool-line"></div>')}
${section('projected', 'Projected blocks', '<div class="chart" id="chart-projected" role="img" aria-label="Fee range and median of each projected block"></div><div class="table-wrap"><table id="projected-table"></table></div>')}
${section('blocks', 'Recent blocks: fee-rate percentiles', '<p id="blocks-line"></p><div class="chart" id="chart-percentiles" role="img" aria-labelledby="blocks-heading blocks-line"></div>')}
${section(
  'scores',
  'Fee estimator scoreboard',
  '<p id="scores-line" class="note"></p><p class="controls"><label for="horizon">Horizon</label> <select id="horizon"></select></p><div id="scoreboard"><div class="table-wrap"><table id="score-table"></table></div><div class="chart" id="chart-hit" role="img" aria-label="Hit rate per hour of each source at the chosen horizon"></div></div>',
)}
${section('resources', 'Paid resources', '<p class="note">Prices from the service\'s registry. Opening a paid link in a browser shows its payment page.</p><div class="table-wrap"><table id="resource-table"></table></div><p id="discovery-links"></p>')}
</main>
<footer><p class="note">Data: <a href="/dashboard/data">/dashboard/data</a> (free JSON, the document this page polls).</p></footer>
<noscript><p>The live figures need JavaScript; the same data is at <a href="/dashboard/data">/dashboard/data</a>.</p></noscript>
<script id="dashboard-data" type="application/json">${scriptJsonText(options.dataText)}</script>
<script id="dashboard-colours" type="application/json">${JSON.stringify(SERIES_COLOURS)}</script>
<script src="${href('uplot.js')}"></script>
<script src="${href('dashboard-dom.js')}"></script>
<script src="${href('dashboard-charts.js')}"></script>
<script src="${href('dashboard.js')}"></script>
</body>
</html>
`;
}

const notModified = (context: RouteContext, etag: string) =>
  (context.header('if-none-match') ?? '')
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .includes(etag);

/** `GET /`, `GET /dashboard/data` and `GET /dashboard/assets/:name`. */
export function createDashboardRoutes(options: { source: DashboardSource; title: string }): ServiceRoute[] {
  const { source } = options;
  return [
    {
      method: 'GET',
      path: '/',
      async handler(): Promise<RouteResult> {
        const { text } = await source.read();
        return {
          status: 200,
          headers: {
            'content-type': 'text/html; charset=utf-8',
            'cache-control': 'no-cache',
            'content-security-policy': CSP,
            'x-content-type-options': 'nosniff',
          },
          body: Buffer.from(renderDashboardPage({ title: options.title, dataText: text }), 'utf8'),
        };
      },
    },
    {
      method: 'GET',
      path: '/dashboard/data',
      async handler(context): Promise<RouteResult> {
        const { text, etag } = await source.read();
        const headers = { etag, 'cache-control': 'no-cache' };
        if (notModified(context, etag)) return { status: 304, headers };
        return {
          status: 200,
          headers: { ...headers, 'content-type': 'application/json; charset=utf-8' },
          body: Buffer.from(text, 'utf8'),
        };
      },
    },
    {
      method: 'GET',
      path: '/dashboard/assets/:name',
      handler(context): RouteResult {
        const file = dashboardAssets().get(context.params['name'] ?? '');
        if (!file) {
          return errorResult({
            status: 404,
            code: 'not_found',
            requestId: context.requestId,
            retryable: false,
          });
        }
        const etag = `"${file.version}"`;
        // The page links each file with its version: a new build is a new URL.
        const headers = { etag, 'cache-control': 'public, max-age=31536000, immutable' };
        if (notModified(context, etag)) return { status: 304, headers };
        return { status: 200, headers: { ...headers, 'content-type': file.type }, body: file.body };
      },
    },
  ];
}
