import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { markdownAnchors, markdownAnchorsOf } from './support/markdown-anchors';

// Comments, errors and documents point at things a reader of the repository can open: a file of
// `docs/` (with a heading that exists when an anchor is named), never the project's private notes.

const root = fileURLToPath(new URL('..', import.meta.url));
const tracked = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' })
  .split('\n')
  .filter((path) => path !== '' && existsSync(join(root, path)));
const code = tracked.filter((path) => /\.(ts|mts|cts|js|mjs|cjs|html)$/.test(path));
const markdown = tracked.filter((path) => path.endsWith('.md') && !path.endsWith('CHANGELOG.md'));

const anchorCache = new Map<string, Set<string>>();
function anchorsOf(path: string): Set<string> {
  let anchors = anchorCache.get(path);
  if (!anchors) {
    anchors = markdownAnchorsOf(join(root, path));
    anchorCache.set(path, anchors);
  }
  return anchors;
}

/** Why `target` (a repository path, maybe with `#anchor`) does not resolve, or undefined. */
function brokenTarget(target: string): string | undefined {
  const [path, anchor] = target.split('#') as [string, string | undefined];
  if (!existsSync(join(root, path))) return `${target}: no such file`;
  if (anchor !== undefined && path.endsWith('.md') && !anchorsOf(path).has(anchor))
    return `${target}: no heading with this anchor`;
  return undefined;
}

const workspaces = ['packages', 'examples'].flatMap((group) =>
  readdirSync(join(root, group)).map((dir) => `${group}/${dir}`),
);

/** The workspace package a file belongs to (its folder), or '' outside them. */
function packageOf(path: string): string {
  return workspaces.find((dir) => path.startsWith(`${dir}/`)) ?? '';
}

function linesOf(path: string): string[] {
  return readFileSync(join(root, path), 'utf8').split('\n');
}

describe('references in code', () => {
  it('name docs/ files and headings that exist', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const path of code) {
      for (const [i, line] of linesOf(path).entries()) {
        for (const match of line.matchAll(/\bdocs\/[\w.-]+\.md(?:#[\w-]+)?/g)) {
          checked++;
          const why = brokenTarget(match[0]);
          if (why) broken.push(`${path}:${i + 1}: ${why}`);
        }
      }
    }
    expect(checked).toBeGreaterThan(10);
    expect(broken).toEqual([]);
  });

  it('name src/ and packages/ paths that exist, in comments', () => {
    // `packages/…` and `examples/…` from the repository's root; `src/…` from the package of the
    // file (outside a package: a workspace package's). Globs and placeholders (`*`, `<name>`, `…`)
    // are not paths.
    const broken: string[] = [];
    let checked = 0;
    const comment = /^\s*(?:\/\/|\/\*|\*)|\s\/\/\s/;
    const named = /(?<![\w/.@-])((?:packages|examples|src)\/[\w.-]+(?:\/[\w.@-]+)*)(.?)/g;
    for (const path of code) {
      const base = packageOf(path);
      for (const [i, line] of linesOf(path).entries()) {
        const at = comment.exec(line);
        if (!at) continue;
        for (const match of line.slice(at.index).matchAll(named)) {
          if (['*', '<', '…', '{'].includes(match[2]!)) continue;
          const target = match[1]!.replace(/\.+$/, '');
          checked++;
          const bases = !target.startsWith('src/') ? [''] : base !== '' ? [base] : workspaces;
          if (!bases.some((dir) => existsSync(join(root, dir, target))))
            broken.push(`${path}:${i + 1}: ${target}: no such file or folder`);
        }
      }
    }
    expect(checked).toBeGreaterThan(10);
    expect(broken).toEqual([]);
  });

  it('never point at the private design notes or the seed', () => {
    const found: string[] = [];
    const privateNote =
      /\b(?:DESIGN|PROTOCOL|FEES|CONVENTIONS|DEVNET)\.md\b|\bseed(?:'s)? (?:section|§|\d+\.\d)|\bthe seed's\b|\bseed section\b|\bthe seed (?:allows|writes|says)\b|\bseed Error\b/i;
    for (const path of [...code, ...markdown]) {
      if (path === 'test/doc-references.test.ts') continue;
      for (const [i, line] of linesOf(path).entries())
        if (privateNote.test(line)) found.push(`${path}:${i + 1}: ${line.trim()}`);
    }
    expect(found).toEqual([]);
  });
});

describe('links in Markdown', () => {
  it('lead to files and headings that exist', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const path of markdown) {
      const text = readFileSync(join(root, path), 'utf8');
      const own = markdownAnchors(text);
      for (const [i, line] of text.split('\n').entries()) {
        for (const match of line.matchAll(/\]\(([^)\s]+)\)/g)) {
          const target = match[1]!;
          if (/^[a-z][a-z+.-]*:/i.test(target)) continue;
          checked++;
          if (target.startsWith('#')) {
            if (!own.has(target.slice(1)))
              broken.push(`${path}:${i + 1}: ${target}: no heading with this anchor`);
            continue;
          }
          const resolved = relative(root, join(root, dirname(path), decodeURIComponent(target)));
          const why = brokenTarget(resolved);
          if (why) broken.push(`${path}:${i + 1}: ${why}`);
        }
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect(broken).toEqual([]);
  });
});
