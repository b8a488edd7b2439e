import { readFileSync } from 'node:fs';
import {
  AUDITS,
  FACILITATOR_AUDITS,
  FAULT_AUDITS,
  MCP_AUDITS,
  renderAuditsMarkdown,
  withGeneratedTables,
} from '@tollbooth/conformance';
import { describe, expect, it } from 'vitest';

/** Table rows without padding, so a Markdown formatter's alignment does not count as drift. */
const normalize = (markdown: string) =>
  markdown
    .split('\n')
    .map((line) => (line.startsWith('|') ? line.replace(/ {2,}/g, ' ').replace(/-{3,}/g, '---') : line))
    .join('\n');

describe('docs/audits.md', () => {
  it('is the table generated from the audit list (run packages/conformance/scripts/write-audits-doc.ts)', () => {
    const committed = readFileSync(new URL('../docs/audits.md', import.meta.url), 'utf8');
    expect(normalize(committed)).toBe(normalize(renderAuditsMarkdown()));
  });

  it('lists every audit id once', () => {
    const committed = readFileSync(new URL('../docs/audits.md', import.meta.url), 'utf8');
    for (const audit of [...AUDITS, ...MCP_AUDITS]) {
      expect(committed.match(new RegExp(`^\\| ${audit.id} +\\|`, 'gm'))).toHaveLength(1);
    }
  });
});

describe('docs/conformance.md', () => {
  it('holds the facilitator, fault and MCP tables generated from the audit lists (run packages/conformance/scripts/write-audits-doc.ts)', () => {
    const committed = readFileSync(new URL('../docs/conformance.md', import.meta.url), 'utf8');
    expect(normalize(committed)).toBe(normalize(withGeneratedTables(committed)));
    for (const audit of [...FACILITATOR_AUDITS, ...FAULT_AUDITS, ...MCP_AUDITS]) {
      expect(committed.match(new RegExp(`^\\| ${audit.id} +\\|`, 'gm'))).toHaveLength(1);
    }
  });
});
