// Packs every public package the way a release does (`npm pack`, whose prepack builds and writes
// the published manifest), reads the tarballs, and installs them into a scratch app outside the
// workspace. Used by test/tarball.test.ts.
import { execFile } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';

export const ROOT = join(import.meta.dirname, '..', '..');

const run = promisify(execFile);

/** A packed package: its tarball and the files in it (paths without the `package/` prefix). */
export interface PackedPackage {
  name: string;
  dir: string;
  tarball: string;
  data: Buffer;
  files: Map<string, Buffer>;
  manifest: Record<string, unknown> & { exports: Record<string, unknown>; bin?: Record<string, string> };
}

/** The directories under packages/ whose manifest is not private. */
export function publicPackageDirs(): string[] {
  return readdirSync(join(ROOT, 'packages')).filter((dir) => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'packages', dir, 'package.json'), 'utf8'));
    return manifest.private !== true;
  });
}

/**
 * Packs the working tree's public packages with `npm pack` into `<scratch>/packs`. The packing
 * runs on a copy of the repository (sources, configs, the root LICENSE, the pack script; the
 * installed node_modules linked): prepack rewrites package.json and the build replaces dist/,
 * and neither may happen under the other tests, which resolve the workspace manifests while
 * this runs.
 */
export async function packPackages(scratch: string): Promise<PackedPackage[]> {
  const stage = join(scratch, 'repo');
  const packs = join(scratch, 'packs');
  mkdirSync(join(stage, 'scripts'), { recursive: true });
  mkdirSync(packs);
  for (const file of ['package.json', 'tsconfig.json', 'tsconfig.base.json', 'tsup.config.ts', 'LICENSE'])
    cpSync(join(ROOT, file), join(stage, file));
  cpSync(join(ROOT, 'scripts', 'pack-manifest.mjs'), join(stage, 'scripts', 'pack-manifest.mjs'));
  const dirs = publicPackageDirs();
  for (const dir of dirs) {
    cpSync(join(ROOT, 'packages', dir), join(stage, 'packages', dir), {
      recursive: true,
      filter: (source) => !/[/\\](dist|node_modules)$/.test(source),
    });
  }
  symlinkSync(join(ROOT, 'node_modules'), join(stage, 'node_modules'), 'dir');
  await run('npm', ['pack', '--workspace', 'packages', '--pack-destination', packs, '--silent'], {
    cwd: stage,
    maxBuffer: 64 * 1024 * 1024,
  });
  return dirs.map((dir) => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'packages', dir, 'package.json'), 'utf8'));
    const tarball = join(
      packs,
      `${manifest.name.replace('@', '').replace('/', '-')}-${manifest.version}.tgz`,
    );
    const data = readFileSync(tarball);
    const files = untar(gunzipSync(data));
    const packed = JSON.parse(files.get('package.json')!.toString('utf8'));
    return { name: manifest.name, dir, tarball, data, files, manifest: packed };
  });
}

/** The regular files of a tar archive (ustar, as npm writes it). */
function untar(archive: Buffer): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  let offset = 0;
  while (offset + 512 <= archive.length && archive[offset] !== 0) {
    const header = archive.subarray(offset, offset + 512);
    const field = (start: number, length: number) =>
      header.toString('utf8', start, start + length).replace(/\0.*$/s, '');
    const name = [field(345, 155), field(0, 100)].filter(Boolean).join('/');
    const size = Number.parseInt(field(124, 12).trim() || '0', 8);
    const type = field(156, 1);
    if (type === '0' || type === '') {
      files.set(name.replace(/^package\//, ''), archive.subarray(offset + 512, offset + 512 + size));
    }
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}

/** The version of a package installed in the workspace, so the scratch app gets the same. */
export function workspaceVersion(name: string): string {
  return JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version;
}

/**
 * A scratch app in the system's temp directory (outside the workspace, so nothing resolves to
 * the workspace's node_modules) with the tarballs and `extra` packages installed from the
 * registry. Install scripts are skipped: the native addons (better-sqlite3, secp256k1, keccak)
 * would compile from source here, and the cases run none of them (the EVM package falls back
 * to @noble/curves, as documented).
 */
export async function installScratchApp(packed: PackedPackage[], extra: string[]): Promise<string> {
  const app = mkdtempSync(join(tmpdir(), 'tollbooth-tarball-app-'));
  writeFileSync(
    join(app, 'package.json'),
    `${JSON.stringify({ name: 'scratch', private: true, type: 'module' })}\n`,
  );
  await run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      '--prefer-offline',
      ...packed.map((p) => p.tarball),
      ...extra,
    ],
    { cwd: app, maxBuffer: 64 * 1024 * 1024 },
  );
  return app;
}

export function scratchDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}
