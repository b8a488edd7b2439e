// The fee dashboard's browser script (served at /dashboard/assets/dashboard.js, no build step).
// It draws the document embedded in the page, then polls GET /dashboard/data every
// POLL_MS with If-None-Match: the document changes when the snapshot or the observatory does,
// so most polls are a 304 of a few hundred bytes. Polling, not server-sent events: the service's
// routes answer one buffered body on all three frameworks, a poll survives sleep, proxies and
// flaky networks without a reconnect protocol, and the data changes at the upstream's pace
// (a snapshot every 10 s) anyway. Polls stop while the tab is hidden or paused.
/* global uPlot */
(() => {
  const POLL_MS = 10_000;
  const MAX_BACKOFF_MS = 60_000;
  const colours = JSON.parse(document.getElementById('dashboard-colours').textContent);
  let data = JSON.parse(document.getElementById('dashboard-data').textContent);
  let etag = null;
  let clockOffsetMs = 0; // server time − browser time, from the Date header
  let lastContact = Date.now();
  let failures = 0;
  let paused = false;
  let timer = null;
  const charts = new Map();

  // -- DOM helpers ------------------------------------------------------------------------------

  const $ = (id) => document.getElementById(id);
  function el(tag, attributes, children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (name === 'text') node.textContent = value;
      else node.setAttribute(name, value === true ? '' : value);
    }
    for (const child of children || []) node.append(child);
    return node;
  }
  const fmt = (value, digits = 1) =>
    value === null || value === undefined
      ? '–'
      : Number(value).toLocaleString('en', { maximumFractionDigits: digits });
  const pct = (value) => (value === null || value === undefined ? '–' : `${(value * 100).toFixed(1)} %`);
  const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const vmb = (vsize) => `${(vsize / 1_000_000).toLocaleString('en', { maximumFractionDigits: 2 })} MvB`;
  function table(node, head, rows) {
    node.replaceChildren(
      el('thead', {}, [
        el(
          'tr',
          {},
          head.map((h) => el('th', { scope: 'col', text: h })),
        ),
      ]),
      el(
        'tbody',
        {},
        rows.map((cells) =>
          el(
            'tr',
            {},
            cells.map((cell) =>
              cell instanceof Node ? el('td', {}, [cell]) : el('td', { text: String(cell) }),
            ),
          ),
        ),
      ),
    );
  }
  function message(node, text) {
    node.replaceChildren(el('p', { class: 'empty', text }));
  }

  // -- charts -----------------------------------------------------------------------------------

  function widthOf(node) {
    return Math.max(260, Math.min(node.clientWidth || 600, 980));
  }
  function draw(id, options, series) {
    const node = $(id);
    charts.get(id)?.destroy();
    charts.delete(id);
    node.replaceChildren();
    const chart = new uPlot({ width: widthOf(node), height: 240, ...options }, series, node);
    charts.set(id, chart);
  }
  function drop(id, text) {
    charts.get(id)?.destroy();
    charts.delete(id);
    message($(id), text);
  }
  const axis = (label, values) => ({ label, size: 60, stroke: '#333', grid: { stroke: '#e5e7eb' }, values });
  const line = (label, i, extra) => ({ label, stroke: colours[i % colours.length], width: 2, ...extra });

  function drawBands() {
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
        scales: { x: { time: false, range: [-0.6, ordered.length - 0.4] } },
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

  function drawProjected() {
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
      ['Block', 'Transactions', 'Virtual size', 'Median sat/vB', 'Range sat/vB', 'Fees (sats)'],
      blocks.map((b) => [
        `#${b.index + 1}`,
        fmt(b.transaction_count, 0),
        vmb(b.vsize),
        fmt(b.median_fee_rate_sat_vb),
        `${fmt(b.min_fee_rate_sat_vb)} – ${fmt(b.max_fee_rate_sat_vb)}`,
        fmt(b.total_fees_sat, 0),
      ]),
    );
  }

  function drawPercentiles() {
    const blocks = data.blocks;
    if (!blocks || blocks.length === 0) {
      $('blocks-line').textContent = '';
      return drop('chart-percentiles', data.observatory_error || 'No block recorded yet.');
    }
    const last = blocks[blocks.length - 1];
    $('blocks-line').textContent =
      `${blocks.length} blocks up to ${last.height}; the last one: median ${fmt(last.p50)} sat/vB, ` +
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
    return `${target} blocks (about ${Math.round((target * 10) / 6) / 10} h)`;
  }

  let horizon = null;

  function drawScores() {
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
      'rate would have entered one of the blocks of its horizon; sources rank by cost (median overpayment ' +
      'plus a penalty per miss) within each horizon, never across horizons.';
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

  // -- text parts -------------------------------------------------------------------------------

  function renderTiers() {
    const snapshot = data.snapshot;
    const names = {
      fastest: 'Next block',
      half_hour: 'Half an hour',
      hour: 'An hour',
      economy: 'Economy (a day)',
      minimum: 'Minimum',
    };
    if (!snapshot) {
      message($('tiers'), `No validated fee snapshot: ${data.snapshot_error || 'none yet'}.`);
      $('snapshot-line').textContent = '';
      return;
    }
    $('tiers').replaceChildren(
      ...snapshot.tiers.map((t) =>
        el('div', { class: 'tier' }, [
          el('span', { class: 'tier-name', text: names[t.tier] || t.tier }),
          el('span', { class: 'tier-rate', text: `${fmt(t.rate_sat_vb)} sat/vB` }),
          el('span', {
            class: 'tier-fee',
            text: `${fmt(t.fee_sat, 0)} sats for ${snapshot.illustration_vbytes} vB`,
          }),
        ]),
      ),
    );
    $('snapshot-line').textContent =
      `Snapshot from ${snapshot.source} at tip ${snapshot.tip_height ?? 'unknown'} (${snapshot.digest.slice(0, 19)}…).`;
  }

  function renderSignal() {
    const snapshot = data.snapshot;
    const holder = $('signal-body');
    if (!snapshot) return message(holder, 'No signal without a validated snapshot.');
    const { signal, mempool } = snapshot;
    const savings = signal.potential_savings;
    const decision = resourceHref('/api/v1/fees/now');
    holder.replaceChildren(
      el('p', { class: `verdict verdict-${signal.decision}` }, [
        el('strong', { text: signal.decision === 'wait' ? 'Wait' : 'Send now' }),
        ` (${signal.algorithm_version}: ${signal.reason_codes.join(', ')})`,
      ]),
      el('p', {
        text:
          `Waiting for the economy rate saves ${fmt(savings.sat_vb)} sat/vB (${fmt(savings.percent)} % of the next-block rate), ` +
          `${fmt(savings.at_140_vbytes_sat, 0)} sats on a 140 vB payment. Backlog: ${plural(mempool.projected_block_count, 'block')}.`,
      }),
      decision
        ? el('p', {}, [
            el('a', {
              href: decision.href,
              text: `Buy the decision with its settlement receipt (${decision.price})`,
            }),
          ])
        : '',
    );
  }

  function resourceHref(path) {
    const found = data.resources.find((r) => r.path === path && r.href);
    return found ? { href: found.href, price: found.price } : undefined;
  }

  function renderMempoolLine() {
    const snapshot = data.snapshot;
    $('mempool-line').textContent = snapshot
      ? `${fmt(snapshot.mempool.count, 0)} unconfirmed transactions, ${vmb(snapshot.mempool.vsize)}: ` +
        `${plural(snapshot.mempool.projected_block_count, 'block')} of backlog.`
      : '';
  }

  function renderResources() {
    table(
      $('resource-table'),
      ['Resource', 'Price', 'State'],
      data.resources.map((r) => [
        r.href
          ? el('a', { href: r.href }, [el('code', { text: `${r.method} ${r.path}` })])
          : el('code', { text: `${r.method} ${r.path}` }),
        r.price ?? 'free',
        r.availability === 'active' ? 'active' : `${r.availability}${r.reason ? `: ${r.reason}` : ''}`,
      ]),
    );
    const links = [
      ['/.well-known/x402', data.discovery.well_known],
      ['catalog', data.discovery.catalog],
      ['OpenAPI', data.discovery.openapi],
    ];
    $('discovery-links').replaceChildren(
      'Discovery: ',
      ...links.flatMap(([label, href], i) => [i ? ', ' : '', el('a', { href, text: label })]),
    );
  }

  function render() {
    renderTiers();
    renderSignal();
    renderMempoolLine();
    renderResources();
    drawBands();
    drawProjected();
    drawPercentiles();
    drawScores();
    document.body.setAttribute('data-charts-drawn', String(charts.size));
    document.body.setAttribute('data-generated-at', data.generated_at);
    document.body.setAttribute('data-state', 'live');
    tick();
  }

  // -- freshness, polling -------------------------------------------------------------------------

  function tick() {
    const now = Date.now() + clockOffsetMs;
    const snapshot = data.snapshot;
    let text;
    let state;
    if (!snapshot) {
      text = 'No validated snapshot';
      state = 'missing';
    } else {
      const age = Math.max(0, Math.round((now - Date.parse(snapshot.fetched_at)) / 1000));
      state =
        age > data.freshness.fallback_seconds
          ? 'expired'
          : snapshot.stale || age > data.freshness.fresh_seconds
            ? 'stale'
            : 'fresh';
      text = `Snapshot ${age} s old: ${state === 'fresh' ? 'fresh' : state === 'stale' ? 'stale (served as a fallback)' : 'too old to serve'}`;
    }
    const live = $('live');
    if (live.getAttribute('data-freshness') !== state) live.setAttribute('data-freshness', state);
    live.textContent = text;
    const since = Math.round((Date.now() - lastContact) / 1000);
    $('updated').textContent = paused
      ? 'Updates paused.'
      : failures > 0
        ? `Offline: the service has not answered for ${since} s; showing the last figures.`
        : `Checked ${since} s ago, every ${POLL_MS / 1000} s.`;
  }

  async function poll() {
    timer = null;
    if (paused || document.hidden) return;
    try {
      const response = await fetch('/dashboard/data', {
        headers: etag ? { 'If-None-Match': etag } : {},
        cache: 'no-store',
      });
      const date = Date.parse(response.headers.get('date') || '');
      if (!Number.isNaN(date)) clockOffsetMs = date - Date.now();
      if (response.status === 200) {
        etag = response.headers.get('etag');
        data = await response.json();
        render();
      } else if (response.status !== 304) {
        throw new Error(`HTTP ${response.status}`);
      }
      failures = 0;
      lastContact = Date.now();
      document.body.setAttribute(
        'data-polls',
        String(Number(document.body.getAttribute('data-polls') || 0) + 1),
      );
    } catch {
      failures += 1;
      document.body.setAttribute('data-state', 'offline');
    }
    tick();
    schedule();
  }

  function schedule() {
    if (timer !== null || paused || document.hidden) return;
    timer = setTimeout(poll, Math.min(POLL_MS * 2 ** failures, MAX_BACKOFF_MS));
  }

  $('horizon').addEventListener('change', (event) => {
    horizon = Number(event.target.value);
    drawScores();
    document.body.setAttribute('data-charts-drawn', String(charts.size));
  });
  $('pause').addEventListener('click', () => {
    paused = !paused;
    $('pause').setAttribute('aria-pressed', String(paused));
    $('pause').textContent = paused ? 'Resume live updates' : 'Pause live updates';
    if (paused && timer !== null) {
      clearTimeout(timer);
      timer = null;
    }
    if (!paused) poll();
    tick();
  });
  document.addEventListener('visibilitychange', () => {
    if (!document.hidden && timer === null) poll();
  });
  let resizing = null;
  window.addEventListener('resize', () => {
    clearTimeout(resizing);
    resizing = setTimeout(() => {
      for (const [id, chart] of charts) chart.setSize({ width: widthOf($(id)), height: 240 });
    }, 150);
  });

  render();
  setInterval(tick, 1000);
  schedule();
})();
