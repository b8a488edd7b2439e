// The manifest conventions of docs/packaging.md, checked on the workspace manifests (no build):
// what the tarball test proves for today's packages, this keeps true for the next one added.
import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/packed-packages';

const run = promisify(execFile);

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  license?: string;
  repository?: { type: string; url: string; directory?: string };
  type?: string;
  sideEffects?: boolean;
  engines?: { node?: string };
  exports?: Record<string, Record<string, unknown>>;
  main?: string;
  module?: string;
  types?: string;
  bin?: Record<string, string>;
  files?: string[];
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  tollbooth?: { entry?: string[] | Record<string, string>; commands?: string[] };
}

const read = (path: string): Manifest => JSON.parse(readFileSync(join(ROOT, path), 'utf8'));
const root = read('package.json');
const workspaces = ['packages', 'examples'].flatMap((group) =>
  readdirSync(join(ROOT, group)).map((dir) => ({
    dir: `${group}/${dir}`,
    manifest: read(`${group}/${dir}/package.json`),
  })),
);
const published = workspaces.filter((w) => w.dir.startsWith('packages/') && !w.manifest.private);
const version = published[0]!.manifest.version;

/** The library entry points a package builds: output name → source file. */
function entries(manifest: Manifest): Record<string, string> {
  const entry = manifest.tollbooth?.entry ?? ['src/index.ts'];
  if (!Array.isArray(entry)) return entry;
  return Object.fromEntries(entry.map((file) => [file.replace(/^src\//, '').replace(/\.ts$/, ''), file]));
}

describe.each(published)('$dir', ({ dir, manifest }) => {
  it('shares the one version and names the license, repository and module format', () => {
    expect(manifest.version).toBe(version);
    expect(manifest.license).toBe('MIT');
    expect(manifest.repository).toEqual({ ...root.repository, directory: dir });
    expect(manifest.type).toBe('module');
    expect(manifest.sideEffects).toBe(false);
  });

  it('exports ESM and CommonJS with types first, and the TypeScript source under tollbooth-source', () => {
    const outputs = entries(manifest);
    const subpaths = Object.keys(manifest.exports ?? {});
    expect(subpaths).toContain('.');
    expect(subpaths).toHaveLength(Object.keys(outputs).length);
    for (const [subpath, branches] of Object.entries(manifest.exports ?? {})) {
      const source = branches['tollbooth-source'] as string;
      const out = Object.entries(outputs).find(([, file]) => `./${file}` === source)?.[0];
      expect(out, `${subpath}: tollbooth-source names a built entry`).toBeDefined();
      expect(Object.keys(branches)).toEqual(['tollbooth-source', 'import', 'require']);
      expect(branches['import']).toEqual({ types: `./dist/${out}.d.ts`, default: `./dist/${out}.js` });
      expect(branches['require']).toEqual({ types: `./dist/${out}.d.cts`, default: `./dist/${out}.cjs` });
      expect(Object.keys(branches['import'] as object)[0]).toBe('types');
      expect(Object.keys(branches['require'] as object)[0]).toBe('types');
    }
    expect([manifest.main, manifest.module, manifest.types]).toEqual([
      './dist/index.cjs',
      './dist/index.js',
      './dist/index.d.ts',
    ]);
  });

  it('packs only the build, its commands and its CHANGELOG, and builds before every pack', () => {
    expect(manifest.files).toEqual([
      'dist',
      ...(manifest.bin ? ['bin'] : []),
      ...(manifest.files ?? []).filter((f) => !['dist', 'bin', 'CHANGELOG.md'].includes(f)),
      'CHANGELOG.md',
    ]);
    expect(manifest.files?.some((f) => f.startsWith('src'))).toBe(false);
    expect(existsSync(join(ROOT, dir, 'CHANGELOG.md'))).toBe(true);
    expect(existsSync(join(ROOT, dir, 'README.md'))).toBe(true);
    expect(manifest.scripts).toMatchObject({
      build: 'tsup --config ../../tsup.config.ts',
      prepack: 'npm run build && node ../../scripts/pack-manifest.mjs prepack',
      postpack: 'node ../../scripts/pack-manifest.mjs postpack',
      postpublish: 'node ../../scripts/pack-manifest.mjs postpublish',
    });
  });

  it('runs each command through an executable launcher in bin/ that names a built command entry', () => {
    const commands = manifest.tollbooth?.commands ?? [];
    expect(Object.keys(manifest.bin ?? {})).toHaveLength(commands.length);
    for (const [command, target] of Object.entries(manifest.bin ?? {})) {
      expect(target).toBe(`./bin/${command}.js`);
      const launcher = join(ROOT, dir, target);
      accessSync(launcher, constants.X_OK);
      const text = readFileSync(launcher, 'utf8');
      expect(text.startsWith('#!/usr/bin/env node\n')).toBe(true);
      const source = /new URL\('\.\.\/(src\/[\w-]+)\.ts'/.exec(text)?.[1];
      expect(commands, `${command} runs a file listed in tollbooth.commands`).toContain(`${source}.ts`);
      expect(text).toContain(`await import('../dist/${source!.slice(4)}.js')`);
      expect(existsSync(join(ROOT, dir, `${source}.ts`))).toBe(true);
    }
  });
});

describe('versions and dependencies', () => {
  it('pins every dependency on a workspace package to the one shared version', () => {
    const names = new Set(workspaces.map((w) => w.manifest.name));
    for (const { dir, manifest } of workspaces) {
      for (const field of [
        'dependencies',
        'optionalDependencies',
        'peerDependencies',
        'devDependencies',
      ] as const) {
        for (const [name, range] of Object.entries(manifest[field] ?? {})) {
          if (names.has(name)) expect(range, `${dir} ${field} ${name}`).toBe(version);
        }
      }
    }
  });

  it('moves every published package together in one changesets fixed group', () => {
    const config = JSON.parse(readFileSync(join(ROOT, '.changeset', 'config.json'), 'utf8'));
    expect(config.fixed).toEqual([['@tollbooth/*']]);
    for (const { manifest } of published) expect(manifest.name).toMatch(/^@tollbooth\//);
  });
});

describe('engines', () => {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')).packages as Record<
    string,
    {
      version?: string;
      link?: boolean;
      resolved?: string;
      cpu?: string[];
      os?: string[];
      engines?: { node?: string };
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
      devDependencies?: Record<string, string>;
    }
  >;

  /** Where Node would find `name` from the lockfile location `from` (nested first, then up). */
  function resolve(from: string, name: string): string | undefined {
    for (let at = from; ; ) {
      const candidate = `${at ? `${at}/` : ''}node_modules/${name}`;
      if (lock[candidate]) return lock[candidate].link ? lock[candidate].resolved : candidate;
      if (at === '') return undefined;
      const parent = at.lastIndexOf('/node_modules/');
      at = parent >= 0 ? at.slice(0, parent) : '';
    }
  }

  /** Every package installed for `start`: its dependencies and optional ones, transitively. */
  function installed(start: string, withDev: boolean): string[] {
    const seen = new Set<string>();
    const pending = [start];
    while (pending.length > 0) {
      const at = pending.pop()!;
      const entry = lock[at]!;
      const names = Object.keys({
        ...entry.dependencies,
        ...entry.optionalDependencies,
        ...(withDev && at === start ? entry.devDependencies : {}),
      });
      for (const name of names) {
        const found = resolve(at, name);
        // Platform binaries (cpu/os) install only on their platform and repeat their parent's range.
        if (!found || seen.has(found) || lock[found]!.cpu || lock[found]!.os) continue;
        seen.add(found);
        pending.push(found);
      }
    }
    return [...seen];
  }

  function untrue(range: string, start: string, withDev: boolean): string[] {
    return installed(start, withDev)
      .filter((at) => lock[at]!.engines?.node && !semver.subset(range, lock[at]!.engines!.node!))
      .map((at) => `${at}@${lock[at]!.version}: ${lock[at]!.engines!.node}`);
  }

  it.each(published)('$dir promises no Node version a dependency refuses', ({ dir, manifest }) => {
    expect(semver.validRange(manifest.engines?.node)).toBeTruthy();
    expect(untrue(manifest.engines!.node!, dir, false)).toEqual([]);
  });

  it('the repository (every workspace, dev tools included) promises no Node version a dependency refuses', () => {
    expect(untrue(root.engines!.node!, '', true)).toEqual([]);
    for (const { dir } of workspaces) expect(untrue(root.engines!.node!, dir, false), dir).toEqual([]);
  });
});

describe('commands in the clone', () => {
  const bins = published.flatMap(({ manifest }) => Object.keys(manifest.bin ?? {}));

  it('links every command into node_modules/.bin with the workspace install', () => {
    // npm links a workspace's commands when it creates the link: in a node_modules installed
    // before a command existed, `npm rebuild --ignore-scripts` links it.
    for (const command of bins)
      expect(
        existsSync(join(ROOT, 'node_modules', '.bin', command)),
        `${command} (npm rebuild --ignore-scripts links it)`,
      ).toBe(true);
  });

  it('runs a command from the TypeScript source with no build', async () => {
    const { stdout } = await run(join(ROOT, 'node_modules', '.bin', 'tollbooth-pay'), ['--help'], {
      cwd: ROOT,
    });
    expect(stdout).toMatch(/^usage: tollbooth-pay <url>/);
  });

  it('names in the docs only commands the clone has (never an npx of an unknown name)', () => {
    const texts = [
      'README.md',
      ...['docs', ...workspaces.map((w) => w.dir)].flatMap((d) =>
        readdirSync(join(ROOT, d))
          .filter((f) => f.endsWith('.md'))
          .map((f) => `${d}/${f}`),
      ),
      ...workspaces.flatMap((w) => sourceFiles(join(w.dir, 'src'))),
    ];
    const named = texts.flatMap((file) =>
      [
        ...readFileSync(join(ROOT, file), 'utf8').matchAll(
          /\bnpx\s+(?:(?:-p|--package)[= ](\S+)\s+)?([\w@/.-]+)/g,
        ),
      ].map((m) => ({ file, pkg: m[1], command: m[2]! })),
    );
    expect(named.length).toBeGreaterThan(0);
    for (const { file, pkg, command } of named) {
      expect(existsSync(join(ROOT, 'node_modules', '.bin', command)), `${file}: npx ${command}`).toBe(true);
      if (pkg)
        expect(read(`node_modules/${pkg}/package.json`).bin?.[command], `${file}: ${pkg}`).toBeDefined();
    }
  });
});

function sourceFiles(dir: string): string[] {
  if (!existsSync(join(ROOT, dir))) return [];
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}
