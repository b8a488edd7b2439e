import { AUDITS } from './audits/index';
import { FACILITATOR_AUDITS } from './facilitator/run';
import type { FacilitatorAudit } from './facilitator/types';
import { FAULT_AUDITS } from './faults/audits';
import type { FaultAudit } from './faults/types';
import { MCP_AUDITS } from './mcp/audits';
import type { McpAudit } from './mcp/types';
import type { Audit } from './types';

/** A Markdown table padded like the repository's Markdown formatter pads it. */
function table(cells: string[][]): string[] {
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  const line = (row: string[]) => `| ${row.map((cell, i) => cell.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(cells[0]!), line(widths.map((w) => '-'.repeat(w))), ...cells.slice(1).map(line)];
}

/** Marks a generated table inside docs/conformance.md. */
const marks = (name: string) => ({
  start: `<!-- ${name}:start (generated; see scripts/write-audits-doc.ts) -->`,
  end: `<!-- ${name}:end -->`,
});

/** The facilitator audit table of docs/conformance.md. */
export function renderFacilitatorAuditsMarkdown(
  audits: readonly FacilitatorAudit[] = FACILITATOR_AUDITS,
): string {
  const endpoint = { supported: 'GET /supported', verify: 'POST /verify', settle: 'POST /settle' } as const;
  const rows = audits.map((a) => [a.id, a.level, endpoint[a.endpoint], a.sentence]);
  return table([['Id', 'Level', 'Endpoint', 'Rule'], ...rows]).join('\n');
}

/** The fault audit table of docs/conformance.md. */
export function renderFaultAuditsMarkdown(audits: readonly FaultAudit[] = FAULT_AUDITS): string {
  const fault = (a: FaultAudit) =>
    a.fault.operations ? `${a.fault.mode} (${a.fault.operations.join(', ')})` : a.fault.mode;
  const rows = audits.map((a) => [a.id, a.level, a.profile, fault(a), a.sentence]);
  return table([['Id', 'Level', 'Profile', 'Fault', 'Rule'], ...rows]).join('\n');
}

/** The MCP audit table of docs/audits.md and docs/conformance.md. */
export function renderMcpAuditsMarkdown(audits: readonly McpAudit[] = MCP_AUDITS): string {
  const rows = audits.map((a) => [
    a.id,
    a.level,
    a.profile,
    `${a.sentence}${a.needsFaults ? ' (needs the fault proxy)' : ''}`,
  ]);
  return table([['Id', 'Level', 'Profile', 'Rule'], ...rows]).join('\n');
}

/** `markdown` with its generated tables (facilitator audits, fault audits, MCP audits) replaced by the current ones. */
export function withGeneratedTables(markdown: string): string {
  let text = markdown;
  for (const [name, render] of [
    ['facilitator-audits', renderFacilitatorAuditsMarkdown],
    ['fault-audits', renderFaultAuditsMarkdown],
    ['mcp-audits', renderMcpAuditsMarkdown],
  ] as const) {
    const { start, end } = marks(name);
    const from = text.indexOf(start);
    const to = text.indexOf(end);
    if (from < 0 || to < from) throw new Error(`the ${name} table markers are missing`);
    text = `${text.slice(0, from + start.length)}\n\n${render()}\n\n${text.slice(to)}`;
  }
  return text;
}

export function renderAuditsMarkdown(audits: readonly Audit[] = AUDITS): string {
  const rows = table([
    ['Id', 'Level', 'Profile', 'Target', 'Rule'],
    ...audits.map((a) => [
      a.id,
      a.level,
      a.profile,
      a.needs === 'server' ? 'any server' : 'fixture',
      a.sentence,
    ]),
  ]);
  return [
    '# Resource-server audits',
    '',
    '<!-- Generated from packages/conformance/src/audits by',
    '     `node --conditions=tollbooth-source --import tsx packages/conformance/scripts/write-audits-doc.ts`.',
    '     test/audits-doc.test.ts fails when this file and the list disagree. -->',
    '',
    'Every Tollbooth adapter (Express, Fastify, Koa) must pass every audit below; `test/audits.test.ts`',
    'runs the whole list against each through a real in-process server, and `test/audits-broken.test.ts`',
    'shows each audit failing against a server broken in the way it checks. Ids are stable and never',
    'reused. The level is an RFC 2119 keyword.',
    '',
    '- **Profile** `x402`: a rule of the x402 specification (or, where it is silent, of the official',
    '  packages that clients rely on); any x402 server must keep it. `tollbooth`: Tollbooth’s own profile',
    '  (its error vocabulary, HEAD and CORS handling, request-target rules, availability, ledger',
    '  guarantees); other servers need not follow it.',
    '- **fixture** audits need a server built around `createAuditFixture()` from `@tollbooth/conformance`:',
    '  its routes, a scripted facilitator double and a scheme double whose payments the suite builds.',
    '- **Replay**: ASET-09 and ASET-10 are for a server with the default stored-answer replay, ASET-16',
    '  and ASET-17 for one with `replay: \'strict\'` (docs/ledger.md, "Replay, a stance"); `runAudits`',
    '  and `runAudit` take the mode (`replay`), build the fixture in it and skip the other mode’s audits.',
    '- **any server** audits need only HTTP and the paths of the routes; the CLI runs them against any',
    '  running server (`--profile tollbooth` adds the Tollbooth profile to the x402 rules):',
    '',
    '```sh',
    'tollbooth-conformance http://localhost:3000 --paid /api/v1/fees/now --canonical /api/v1/fees/now \\',
    '  --free /api/v1/fees/preview --profile tollbooth',
    '```',
    '',
    'The facilitator audits are in [`conformance.md`](conformance.md#facilitator-audits).',
    '',
    ...rows,
    '',
    '## MCP audits',
    '',
    'An MCP server that sells tools is audited over MCP itself (the x402 MCP transport and the failure',
    'semantics of [mcp.md](mcp.md#the-mcp-audits)), with the MCP SDK’s own client and a payer on the',
    'server’s chain: `runMcpAudits` from code, or the CLI, which starts a devnet, an honest facilitator',
    'and the fault proxy in front (the server’s facilitator URL), and with `--exec` the server too',
    '([conformance.md](conformance.md#mcp-tools) has the options, a chain of your own among them).',
    '`test/conformance-mcp-cli.test.ts` runs it against the fee service’s `/mcp`:',
    '',
    '```sh',
    'tollbooth-conformance mcp http://127.0.0.1:3000/mcp --tool get_fee_landscape \\',
    "  --exec 'FACILITATOR_URL=$TOLLBOOTH_FACILITATOR_URL RPC_URL=$TOLLBOOTH_RPC_URL PAY_TO=$TOLLBOOTH_PAY_TO PORT=3000 npm start'",
    '```',
    '',
    renderMcpAuditsMarkdown(),
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
