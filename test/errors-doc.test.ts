import { readFileSync } from 'node:fs';
import { ERROR_CODES, errorDocsUrl, TollboothError } from '@tollbooth/core';
import { DEVNET_ERROR_CODES } from '@tollbooth/devnet';
import { describe, expect, it } from 'vitest';
import { markdownAnchors } from './support/markdown-anchors';

const doc = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');

/** The text of a `### \`code\`` section, up to the next heading. */
function section(code: string): string | undefined {
  const start = doc.indexOf(`\n### \`${code}\`\n`);
  if (start < 0) return undefined;
  const rest = doc.slice(start + 1);
  const next = rest.slice(4).search(/\n#{2,3} /);
  return next < 0 ? rest : rest.slice(0, next + 4);
}

describe('docs/errors.md', () => {
  it.each(Object.entries(ERROR_CODES))('documents %s once, with its status', (code, definition) => {
    expect(doc.split(`\n### \`${code}\`\n`)).toHaveLength(2);
    const text = section(code)!;
    if (definition.status === 500) expect(text).toContain('Thrown, never sent.');
    else
      expect(text).toContain(
        `HTTP ${definition.status}, ${definition.retryable ? 'retryable' : 'not retryable'}.`,
      );
  });

  it.each(Object.values(DEVNET_ERROR_CODES))('documents the devnet code %s', (code) => {
    expect(section(code)).toBeDefined();
  });

  it.each(Object.keys(ERROR_CODES) as (keyof typeof ERROR_CODES)[])(
    'has the heading the docsUrl of %s ends at',
    (code) => {
      const url = new TollboothError(code, 'x').docsUrl;
      expect(url).toBe(errorDocsUrl(code));
      const [page, anchor] = url.split('#');
      expect(page).toMatch(/\/docs\/errors\.md$/);
      expect(anchor).toBe(code.toLowerCase());
      expect(markdownAnchors(doc).has(anchor!)).toBe(true);
    },
  );

  it('is where every error links', () => {
    const error = new TollboothError('invalid_config', 'x');
    expect(error.docsUrl).toBe(errorDocsUrl('invalid_config'));
    expect(error.docsUrl).toMatch(/\/docs\/errors\.md#invalid_config$/);
  });
});
