// The fee dashboard's charts (served at /dashboard/assets/dashboard-charts.js, no build step): the
// fee bands, the projected blocks, the block percentiles and the scoreboard, drawn with uPlot from
// the dashboard's document. Loaded after uplot.js and dashboard-dom.js, whose helpers it reads from
// window.FeeDashboard; it adds createCharts there for dashboard.js. The charts drawn and the chosen
// horizon are its own state; the document is handed to each draw.
/* global uPlot */
(() => {
  const { $, el, fmt, pct, plural, vmb, table, message } = window.FeeDashboard;

  /** The chart functions over the series colours; `charts` holds the charts drawn, by element id. */
  function createCharts(colours) {
    const charts = new Map();

    function widthOf(node) {
      return Math.max(260, Math.min(node.clientWidth || 600, 980));
    }
    function draw(id, options, series) {
      const node = $(id);
      charts.get(id)?.destroy();
      charts.delete(id);
      node.replaceChildren();
      // The value axis as drawn, on the chart's element for a reader of the page (and its tests).
      const drawn = (u) => node.setAttribute('data-y-range', `${u.scales.y.min},${u.scales.y.max}`);
      const chart = new uPlot(
        { width: widthOf(node), height: 240, ...options, hooks: { draw: [drawn] } },
        series,
        node,
      );
      charts.set(id, chart);
    }
    function drop(id, text) {
      charts.get(id)?.destroy();
      charts.delete(id);
      message($(id), text);
    }
    const axis = (label, values) => ({
      label,
      size: 60,
      stroke: '#333',
      grid: { stroke: '#e5e7eb' },
      values,
    });
    const line = (label, i, extra) => ({ label, stroke: colours[i % colours.length], width: 2, ...extra });

    function drawBands(data) {
      const bands = data.fee_bands?.bands;
      if (!bands) return drop('chart-bands', `No fee bands: ${data.fee_bands_error || 'no histogram'}.`);
      if (bands.length === 0) return drop('chart-bands', 'The mempool is empty.');
      const ordered = bands;
      const labels = ordered.map((b) =>
        b.max_sat_vb === null ? `${b.min_sat_vb}+` : `${b.min_sat_vb}–${b.max_sat_vb}`,
      );
      draw(
        'chart-bands',
        {
          title: 'Unconfirmed virtual size by fee-rate band (sat/vB)',
          // a bar's length is its size: the value axis starts at 0, never at the smallest band
          scales: {
            x: { time: false, range: [-0.6, ordered.length - 0.4] },
            y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
          },
          axes: [
            axis('sat/vB', (_u, splits) => splits.map((i) => labels[i] ?? '')),
            axis('MvB', (_u, splits) => splits.map((v) => fmt(v, 2))),
          ],
          series: [
            { label: 'band', value: (_u, i) => labels[i] ?? '–' },
            line('virtual size (MvB)', 0, {
              fill: 'rgba(31, 119, 180, 0.55)',
              paths: uPlot.paths.bars({ size: [0.85, 48] }),
              points: { show: false },
            }),
          ],
        },
        [ordered.map((_b, i) => i), ordered.map((b) => b.vsize / 1_000_000)],
      );
    }

    function drawProjected(data) {
      const blocks = data.snapshot?.projected_blocks ?? [];
      if (blocks.length === 0) {
        table($('projected-table'), ['Block'], []);
        return drop(
          'chart-projected',
          !data.snapshot
            ? 'No validated snapshot.'
            : data.snapshot.mempool.count === 0
              ? 'The mempool is empty: no block to project.'
              : 'The upstream gives no projected blocks (Esplora and Core do not).',
        );
      }
      draw(
        'chart-projected',
        {
          title: 'Fee range and median of the next blocks (sat/vB, log scale)',
          scales: { x: { time: false, range: [0.5, blocks.length + 0.5] }, y: { distr: 3 } },
          axes: [
            {
              ...axis('projected block', (_u, splits) => splits.map((v) => `#${v}`)),
              splits: () => blocks.map((b) => b.index + 1),
            },
            axis('sat/vB', (_u, splits) => splits.map((v) => fmt(v))),
          ],
          series: [{ label: 'block' }].concat(
            [line('highest', 1), line('median', 0, { width: 3 }), line('lowest', 2)].map((s) => ({
              ...s,
              points: { show: true, size: 7 },
            })),
          ),
          bands: [{ series: [1, 3], fill: 'rgba(31, 119, 180, 0.12)' }],
        },
        [
          blocks.map((b) => b.index + 1),
          blocks.map((b) => b.max_fee_rate_sat_vb),
          blocks.map((b) => b.median_fee_rate_sat_vb),
          blocks.map((b) => b.min_fee_rate_sat_vb),
        ],
      );
      table(
        $('projected-table'),
        [
          'Block',
          'Transactions',
          'Virtual size',
          'Entry sat/vB',
          'Median sat/vB',
          'Range sat/vB',
          'Fees (sats)',
        ],
        blocks.map((b) => [
          `#${b.index + 1}`,
          fmt(b.transaction_count, 0),
          vmb(b.vsize),
          // the lowest rate it would include: the relay minimum while it has room, its p10 once full
          `${fmt(b.entry_fee_rate_sat_vb, 3)}${b.full ? ' (full)' : ' (room)'}`,
          fmt(b.median_fee_rate_sat_vb),
          `${fmt(b.min_fee_rate_sat_vb)} – ${fmt(b.max_fee_rate_sat_vb)}`,
          fmt(b.total_fees_sat, 0),
        ]),
      );
    }

    function drawPercentiles(data) {
      const blocks = data.blocks;
      if (!blocks || blocks.length === 0) {
        $('blocks-line').textContent = '';
        return drop('chart-percentiles', data.observatory_error || 'No block recorded yet.');
      }
      const last = blocks[blocks.length - 1];
      $('blocks-line').textContent =
        `${plural(blocks.length, 'block')} up to ${last.height}; the last one: median ${fmt(last.p50)} sat/vB, ` +
        `10th–90th percentile ${fmt(last.p10)}–${fmt(last.p90)} sat/vB.`;
      const keys = ['p90', 'p75', 'p50', 'p25', 'p10'];
      draw(
        'chart-percentiles',
        {
          title: 'Fee-rate percentiles of each block (sat/vB, log scale)',
          scales: { x: { time: true }, y: { distr: 3 } },
          axes: [
            { stroke: '#333', grid: { stroke: '#e5e7eb' } },
            axis('sat/vB', (_u, s) => s.map((v) => fmt(v))),
          ],
          series: [{}].concat(
            keys.map((key, i) =>
              line(key, [3, 1, 0, 2, 4][i], { width: key === 'p50' ? 3 : 1.5, points: { show: false } }),
            ),
          ),
          bands: [
            { series: [1, 5], fill: 'rgba(31, 119, 180, 0.08)' },
            { series: [2, 4], fill: 'rgba(31, 119, 180, 0.14)' },
          ],
        },
        [blocks.map((b) => b.time)].concat(keys.map((key) => blocks.map((b) => b[key]))),
      );
    }

    function horizonName(target) {
      if (target === 1) return 'next block';
      if (target === 144) return 'about a day (144 blocks)';
      return `${plural(target, 'block')} (about ${Math.round((target * 10) / 6) / 10} h)`;
    }

    let horizon = null;

    function drawScores(data) {
      const board = data.scoreboard;
      const select = $('horizon');
      if (!board || board.rows.length === 0) {
        select.replaceChildren();
        select.disabled = true;
        $('scores-line').textContent = board
          ? `No scores: ${board.empty_reason || 'no data'}.`
          : data.observatory_error || 'No scores yet.';
        table($('score-table'), ['Rank', 'Source'], []);
        return drop('chart-hit', 'Nothing to chart yet.');
      }
      $('scores-line').textContent =
        `The last ${board.hours} hours (${board.window.from} to ${board.window.to}). A source hits when its ` +
        'rate would have been included in one of the blocks of its horizon: it met the relay minimum of a block ' +
        'that had room, or reached the 10th-percentile rate of a full one. Sources rank by cost (median ' +
        'overpayment plus ten times the fee that would have been included, per miss) within each horizon, ' +
        'never across horizons.';
      if (!board.horizons.includes(horizon)) horizon = board.horizons[0];
      select.disabled = false;
      select.replaceChildren(
        ...board.horizons.map((target) =>
          el('option', { value: String(target), selected: target === horizon, text: horizonName(target) }),
        ),
      );
      table(
        $('score-table'),
        ['Rank', 'Source', 'Estimates', 'Hit rate', 'Median overpay (sats, 140 vB)', 'Availability', 'Cost'],
        board.rows
          .filter((r) => r.target === horizon)
          .map((r) => [
            r.rank,
            r.source,
            fmt(r.n, 0),
            pct(r.hit_rate),
            fmt(r.median_overpayment_sats_140, 0),
            pct(r.availability),
            fmt(r.cost, 0),
          ]),
      );
      const lines = board.timeline.series.filter((s) => s.target === horizon);
      draw(
        'chart-hit',
        {
          title: `Hit rate per hour, ${horizonName(horizon)}`,
          scales: { x: { time: true }, y: { range: [0, 1] } },
          axes: [
            { stroke: '#333', grid: { stroke: '#e5e7eb' } },
            axis('hit rate', (_u, s) => s.map((v) => `${Math.round(v * 100)} %`)),
          ],
          series: [{}].concat(
            lines.map((s, i) => line(s.source, i, { value: (_u, v) => pct(v), spanGaps: false })),
          ),
        },
        [board.timeline.x].concat(lines.map((s) => s.hit_rate)),
      );
    }

    const setHorizon = (target) => {
      horizon = target;
    };
    return { charts, widthOf, drawBands, drawProjected, drawPercentiles, drawScores, setHorizon };
  }

  window.FeeDashboard.createCharts = createCharts;
})();
