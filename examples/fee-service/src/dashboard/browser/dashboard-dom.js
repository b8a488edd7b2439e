// The fee dashboard's DOM helpers and number formats (served at /dashboard/assets/dashboard-dom.js,
// no build step). The page loads it before dashboard-charts.js and dashboard.js, which read these
// helpers from the one global they share, window.FeeDashboard (page.ts lists the files in order).
(() => {
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
            // data-label: a phone's stacked rows name each cell by its column (dashboard.css)
            cells.map((cell, i) =>
              cell instanceof Node
                ? el('td', { 'data-label': head[i] }, [cell])
                : el('td', { 'data-label': head[i], text: String(cell) }),
            ),
          ),
        ),
      ),
    );
  }
  function message(node, text) {
    node.replaceChildren(el('p', { class: 'empty', text }));
  }

  window.FeeDashboard = { $, el, fmt, pct, plural, vmb, table, message };
})();
