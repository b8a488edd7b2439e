import { readFileSync } from 'node:fs';

/**
 * The anchors GitHub gives the headings of a Markdown file: the heading text lower-cased, every
 * character but letters, digits, spaces, `-` and `_` dropped, spaces turned into `-`; a repeated
 * anchor gets `-1`, `-2`, … Headings inside fenced code blocks are not headings. An HTML
 * `<a id="…">` is an anchor too.
 */
export function markdownAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    if (fenced) continue;
    for (const html of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(html[1]!);
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** The anchors of the Markdown file at `path`. */
export function markdownAnchorsOf(path: string): Set<string> {
  return markdownAnchors(readFileSync(path, 'utf8'));
}
