import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/**
 * Self-contained HTML pages of line charts, drawn in the browser by uPlot (a small, fast charting
 * library) whose code and stylesheet are inlined: the page works offline, from a file, with no
 * CDN. The observatory's report uses it; so can any page of the service (a dashboard).
 */

/** One line of a chart: a value per x (null where there is no value: a gap, not a zero). */
export interface ChartSeries {
  label: string;
  values: readonly (number | null)[];
  /** Draw dashed (e.g. a second measure of the same source). */
  dashed?: boolean;
}

/** A line chart over time. */
export interface LineChart {
  /** Element id (letters, digits, `-`). */
  id: string;
  title: string;
  /** x values: seconds since the epoch, ascending. */
  x: readonly number[];
  series: readonly ChartSeries[];
  /** Label of the y axis. */
  yLabel: string;
  /** Fixed y range (e.g. [0, 1] for a rate); default fitted to the data. */
  yRange?: readonly [number, number];
  /** How y values print: a share in [0, 1] as a percentage, or a number. Default number. */
  yFormat?: 'percent' | 'number';
}

/** A section of a page: a heading, HTML of its own (already escaped), and charts. */
export interface ChartSection {
  heading: string;
  html?: string;
  charts: readonly LineChart[];
}

export interface ChartPage {
  title: string;
  /** HTML shown under the title (already escaped). */
  intro?: string;
  sections: readonly ChartSection[];
}

/** A colour per series index, readable on white and distinct for up to 8 series. */
export const SERIES_COLOURS = [
  '#1f77b4',
  '#d62728',
  '#2ca02c',
  '#9467bd',
  '#ff7f0e',
  '#17becf',
  '#8c564b',
  '#e377c2',
] as const;

const require = createRequire(import.meta.url);
let assets: { script: string; css: string } | undefined;

/** uPlot's browser build and stylesheet, read once from the installed package. */
export function chartAssets(): { script: string; css: string } {
  assets ??= {
    script: readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8'),
    css: readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8'),
  };
  return assets;
}

/** Escapes text for HTML. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** JSON safe inside a `<script>` element (no `</script>`, no HTML comment openers). */
export function scriptJson(value: unknown): string {
  return scriptJsonText(JSON.stringify(value));
}

/** JSON text made safe inside a `<script>` element. */
export function scriptJsonText(json: string): string {
  return json
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** Draws every chart of the page from the embedded data (runs in the browser). */
const DRAW = `
(function () {
  var charts = JSON.parse(document.getElementById('chart-data').textContent);
  var colours = ${JSON.stringify(SERIES_COLOURS)};
  charts.forEach(function (c) {
    var el = document.getElementById(c.id);
    var fmt = c.yFormat === 'percent'
      ? function (u, v) { return v == null ? '-' : (v * 100).toFixed(1) + ' %'; }
      : function (u, v) { return v == null ? '-' : String(Math.round(v * 100) / 100); };
    var opts = {
      title: c.title,
      width: Math.max(320, Math.min(900, el.clientWidth || 900)),
      height: 260,
      scales: { x: { time: true }, y: c.yRange ? { range: c.yRange } : {} },
      axes: [{}, {
        label: c.yLabel,
        values: function (u, splits) { return splits.map(function (v) { return fmt(u, v); }); },
        size: 70,
      }],
      series: [{}].concat(c.series.map(function (s, i) {
        return {
          label: s.label,
          stroke: colours[i % colours.length],
          width: 2,
          dash: s.dashed ? [6, 4] : undefined,
          spanGaps: false,
          value: fmt,
          points: { show: c.x.length < 60 },
        };
      })),
    };
    var data = [c.x].concat(c.series.map(function (s) { return s.values; }));
    new uPlot(opts, data, el);
  });
  document.body.setAttribute('data-charts-drawn', String(charts.length));
})();
`;

const STYLE = `
body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 980px; padding: 0 1rem; color: #222; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.25rem; margin-top: 2.2rem; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.8rem 0; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #ddd; padding: 0.25rem 0.5rem; text-align: right; }
th:first-child, td:first-child, th:nth-child(2), td:nth-child(2) { text-align: left; }
thead th { background: #f4f4f4; }
.chart { margin: 1rem 0; min-height: 300px; }
.note { color: #555; font-size: 0.9rem; }
`;

/**
 * Renders a page of charts as one self-contained HTML document (uPlot inlined).
 * @example
 * writeFileSync('report.html', renderChartPage({ title: 'Fees', sections: [{ heading: 'Hit rate', charts: [chart] }] }));
 */
export function renderChartPage(page: ChartPage): string {
  const { script, css } = chartAssets();
  const charts = page.sections.flatMap((section) => section.charts);
  for (const chart of charts) {
    if (!/^[A-Za-z][A-Za-z0-9-]*$/.test(chart.id)) throw new TypeError(`invalid chart id ${chart.id}`);
    for (const series of chart.series) {
      if (series.values.length !== chart.x.length) {
        throw new RangeError(
          `chart ${chart.id}: series ${series.label} has ${series.values.length} values for ${chart.x.length} x`,
        );
      }
    }
  }
  const body = page.sections
    .map(
      (section) =>
        `<section><h2>${escapeHtml(section.heading)}</h2>${section.html ?? ''}${section.charts
          .map((chart) => `<div class="chart" id="${chart.id}"></div>`)
          .join('')}</section>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(page.title)}</title>
<style>${css}</style>
<style>${STYLE}</style>
</head>
<body>
<h1>${escapeHtml(page.title)}</h1>
${page.intro ?? ''}
${body}
<script id="chart-data" type="application/json">${scriptJson(charts)}</script>
<script>${script.replace(/<\/script/gi, '<\\/script')}</script>
<script>${DRAW}</script>
</body>
</html>
`;
}
