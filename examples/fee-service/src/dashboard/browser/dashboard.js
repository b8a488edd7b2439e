// The fee dashboard's main browser script (served at /dashboard/assets/dashboard.js, no build step).
// It draws the document embedded in the page, then polls GET /dashboard/data every
// POLL_MS with If-None-Match: the document changes when the snapshot or the observatory does,
// so most polls are a 304 of a few hundred bytes. Polling, not server-sent events: the service's
// routes answer one buffered body on all three frameworks, a poll survives sleep, proxies and
// flaky networks without a reconnect protocol, and the data changes at the upstream's pace
// (a snapshot every 10 s) anyway. Polls stop while the tab is hidden or paused.
// Its parts are three classic scripts loaded in order by page.ts with no module loader or build
// step: dashboard-dom.js (DOM helpers, number formats) and dashboard-charts.js (the uPlot charts)
// put what they offer on window.FeeDashboard; this file keeps the document and the poll's state
// and draws the text parts.
(() => {
  const { $, el, fmt, plural, vmb, table, message, createCharts } = window.FeeDashboard;
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
  const { charts, widthOf, drawBands, drawProjected, drawPercentiles, drawScores, setHorizon } =
    createCharts(colours);

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

  // The free preview's figures, and the paid decision offered, never given: its answer and reasons
  // are what GET /api/v1/fees/now sells.
  function renderSignal() {
    const snapshot = data.snapshot;
    const holder = $('signal-body');
    const offer = data.decision_offer;
    const savings = snapshot?.potential_savings;
    holder.replaceChildren(
      snapshot
        ? el('p', {
            text:
              `Waiting for the economy rate saves ${fmt(savings.sat_vb)} sat/vB (${fmt(savings.percent)} % of the next-block rate), ` +
              `${fmt(savings.at_140_vbytes_sat, 0)} sats on a 140 vB payment. Backlog: ${plural(snapshot.mempool.projected_block_count, 'block')}.`,
          })
        : el('p', { class: 'empty', text: 'No figures without a validated snapshot.' }),
      !offer
        ? ''
        : offer.href
          ? el('p', { class: 'offer' }, [
              `Send now or wait? The ${offer.algorithm_version} decision on this snapshot, with its reasons and a settlement receipt: `,
              el('a', { href: offer.href, text: `buy it for ${offer.price}` }),
              '.',
            ])
          : el('p', {
              class: 'offer',
              text: `The ${offer.algorithm_version} decision (${offer.price}) is not sold here: ${offer.reason || offer.availability}.`,
            }),
    );
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
    drawBands(data);
    drawProjected(data);
    drawPercentiles(data);
    drawScores(data);
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
    setHorizon(Number(event.target.value));
    drawScores(data);
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
