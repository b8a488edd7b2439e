import { readFileSync } from 'node:fs';
import { AUDITS, renderAuditsMarkdown } from '@tollbooth/conformance';
import { describe, expect, it } from 'vitest';

describe('docs/audits.md', () => {
  it('is the table generated from the audit list (run packages/conformance/scripts/write-audits-doc.ts)', () => {
    const committed = readFileSync(new URL('../docs/audits.md', import.meta.url), 'utf8');
    expect(committed).toBe(renderAuditsMarkdown());
  });

  it('lists every audit id once', () => {
    const committed = readFileSync(new URL('../docs/audits.md', import.meta.url), 'utf8');
    for (const audit of AUDITS) {
      expect(committed.split(`| ${audit.id} |`)).toHaveLength(2);
    }
  });
});
