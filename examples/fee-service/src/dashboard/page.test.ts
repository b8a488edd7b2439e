import { Script } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { dashboardAssets, renderDashboardPage } from './page';

describe('the dashboard page', () => {
  const html = renderDashboardPage({ title: 'Fees </title>', dataText: '{"x":"</script><b>"}' });

  it('loads only its own versioned files, and keeps the embedded document inside its element', () => {
    const files = [...html.matchAll(/(?:src|href)="(\/dashboard\/assets\/([a-z.-]+)\?v=([0-9a-f]{16}))"/g)];
    expect(files.map((m) => m[2])).toEqual([
      'uplot.css',
      'dashboard.css',
      'uplot.js',
      'dashboard-dom.js',
      'dashboard-charts.js',
      'dashboard.js',
    ]);
    for (const [, , name, version] of files) expect(dashboardAssets().get(name!)!.version).toBe(version);
    expect(html).not.toMatch(/(?:src|href)="(?:https?:)?\/\//);
    expect(html).toContain('<title>Fees &#60;/title&#62;</title>');
    expect(html).toContain('{"x":"\\u003c/script>\\u003cb>"}');
  });

  it('serves browser scripts that parse', () => {
    for (const name of ['dashboard-dom.js', 'dashboard-charts.js', 'dashboard.js', 'uplot.js']) {
      expect(() => new Script(dashboardAssets().get(name)!.body.toString('utf8')), name).not.toThrow();
    }
  });
});
