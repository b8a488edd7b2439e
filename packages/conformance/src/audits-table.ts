import { AUDITS } from './audits/index';
import type { Audit } from './types';

/** Renders docs/audits.md from the audit list, so the documentation cannot drift from the code. */
export function renderAuditsMarkdown(audits: readonly Audit[] = AUDITS): string {
  const cells = [
    ['Id', 'Level', 'Target', 'Rule'],
    ...audits.map((a) => [a.id, a.level, a.needs === 'server' ? 'any server' : 'fixture', a.sentence]),
  ];
  // Padded like the repository's Markdown formatter does, so formatting leaves the file alone.
  const widths = [0, 1, 2, 3].map((i) => Math.max(...cells.map((row) => row[i]!.length)));
  const line = (row: string[]) => `| ${row.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  const rows = [line(cells[0]!), line(widths.map((w) => '-'.repeat(w))), ...cells.slice(1).map(line)];
  return [
    '# Resource-server audits',
    '',
    '<!-- Generated from packages/conformance/src/audits by',
    '     `node --conditions=tollbooth-source --import tsx packages/conformance/scripts/write-audits-doc.ts`.',
    '     test/audits-doc.test.ts fails when this file and the list disagree. -->',
    '',
    'Every Tollbooth adapter (Express, Fastify, Koa) must pass every audit below; `test/audits.test.ts`',
    'runs the whole list against each through a real in-process server. Ids are stable and never',
    'reused. The level is an RFC 2119 keyword.',
    '',
    '- **fixture** audits need a server built around `createAuditFixture()` from `@tollbooth/conformance`:',
    '  its routes, a scripted facilitator double and a scheme double whose payments the suite builds.',
    '- **any server** audits need only HTTP and the paths of the routes; the CLI runs them against any',
    '  running server:',
    '',
    '```sh',
    'tollbooth-conformance http://localhost:4021 --paid /api/v1/fees/now --free /healthz',
    '```',
    '',
    ...rows,
    '',
    '## Gate outcomes checked elsewhere',
    '',
    'A few error codes of the gate cannot be produced through one server and its doubles, and are',
    'proved by the core unit tests and the ledger-store suites instead:',
    '',
    '- `payment_in_progress` (409): a duplicate waiting on another instance sharing the ledger;',
    '- `ledger_unavailable` and `internal_error` (503): a ledger store that fails;',
    '- `payment_expired` after reconciliation: an uncertain settlement whose authorization expired unused.',
    '',
  ].join('\n');
}
