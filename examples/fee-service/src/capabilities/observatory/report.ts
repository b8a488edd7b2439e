import { type ChartSection, escapeHtml, type LineChart, renderChartPage } from '../../charts/page';
import type { Observatory, Scoreboard } from './observatory';
import type { RankedScoreRow } from './score-book';
import { MISS_COST_MULTIPLE, REFERENCE_VSIZE } from './scoring';

/**
 * The observatory's report for people: the scoreboard table and, per horizon, every source's hit
 * rate and median overpayment over time, as one self-contained HTML page.
 */

export interface ObservatoryReportOptions {
  /** Window, hours. Default 168. */
  hours?: number;
  /** Hours per plotted point. Default: 1 for a window up to 48 h, else 6. */
  stepHours?: number;
  title?: string;
  /** A sentence about where the data comes from (e.g. "the simulator, seed 42"). */
  provenance?: string;
}

const pct = (v: number | undefined) => (v === undefined ? '–' : `${(v * 100).toFixed(1)} %`);
const num = (v: number | undefined) => (v === undefined ? '–' : String(v));

/** A horizon in words: 'next block (target 1)', '3 blocks (about 0.5 h)', never '1 blocks'. */
function horizonLabel(target: number): string {
  if (target === 1) return 'next block (target 1)';
  if (target === 144) return 'about a day (target 144)';
  return `${target} block${target === 1 ? '' : 's'} (about ${Math.round((target * 10) / 6) / 10} h)`;
}

function scoreTable(rows: readonly RankedScoreRow[]): string {
  const head = [
    'Rank',
    'Source',
    'n',
    'Blocks',
    'Hit',
    'Within',
    'Overpay',
    `Median over (sats @${REFERENCE_VSIZE} vB)`,
    'p90 over',
    'Availability',
    'Cost',
  ];
  const body = rows
    .map(
      (r) =>
        `<tr><td>${r.rank ?? '–'}</td><td>${escapeHtml(r.source)}</td><td>${r.n}</td><td>${r.blocks}</td><td>${pct(r.hit_rate)}</td><td>${pct(r.within_rate)}</td><td>${pct(r.overpay_rate)}</td><td>${num(r.median_overpayment_sats_140)}</td><td>${num(r.p90_overpayment_sats_140)}</td><td>${pct(r.availability)}</td><td>${num(r.cost)}</td></tr>`,
    )
    .join('');
  return `<table><thead><tr>${head.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>${body}</tbody></table>`;
}

/**
 * Builds the report from the observatory's scores.
 * @example writeFileSync('observatory.html', await buildObservatoryReport(observatory, { hours: 24 }));
 */
export async function buildObservatoryReport(
  observatory: Observatory,
  options: ObservatoryReportOptions = {},
): Promise<string> {
  const hours = options.hours ?? 168;
  const stepHours = options.stepHours ?? (hours <= 48 ? 1 : 6);
  const board: Scoreboard = await observatory.scoreboard({ hours });
  const timeline = await observatory.timeline({ hours, stepHours });
  const sections: ChartSection[] = board.horizons.map((target) => {
    const lines = timeline.rows.filter((row) => row.target === target);
    const charts: LineChart[] = [
      {
        id: `hit-rate-${target}`,
        title: `Hit rate per ${stepHours} h, ${horizonLabel(target)}`,
        x: timeline.x,
        series: lines.map((line) => ({ label: line.source, values: line.hit_rate })),
        yLabel: 'hit rate',
        yRange: [0, 1],
        yFormat: 'percent',
      },
      {
        id: `overpayment-${target}`,
        title: `Median overpayment per ${stepHours} h (sats at ${REFERENCE_VSIZE} vB), ${horizonLabel(target)}`,
        x: timeline.x,
        series: lines.map((line) => ({ label: line.source, values: line.median_overpayment_sats_140 })),
        yLabel: 'sats',
      },
    ];
    return {
      heading: `Horizon: ${horizonLabel(target)}`,
      html: scoreTable(board.rows.filter((row) => row.target === target)),
      charts,
    };
  });
  const intro = [
    `<p>Window: ${escapeHtml(board.window.from)} to ${escapeHtml(board.window.to)} (${hours} h).`,
    options.provenance ? ` Data: ${escapeHtml(options.provenance)}.` : '',
    '</p>',
    '<p class="note">An estimate quoting q for a target of k blocks at tip h is a <b>hit</b> when q would have ',
    'been included in one of the blocks h+1 … h+k: it met the relay minimum of a block that had room, or ',
    'reached the 10th fee-rate percentile (standing for the lowest included rate) of a full one (from 99 % of the weight limit). ',
    "The first such block is its first fit; it <b>overpays</b> when q is above that block's 75th percentile. ",
    `The overpayment is q − the first fit's entry rate, in sats for a ${REFERENCE_VSIZE} vB payment. Rows rank within a `,
    `horizon by cost = median overpayment + ${MISS_COST_MULTIPLE} × miss rate × the misses' median entry fee (what `,
    'would have been included): quoting high cannot buy a good rank, and horizons are never compared.</p>',
    board.rows.length === 0 ? `<p><b>No scores:</b> ${escapeHtml(board.empty_reason ?? 'no data')}.</p>` : '',
  ].join('');
  return renderChartPage({ title: options.title ?? 'Fee estimator observatory', intro, sections });
}
