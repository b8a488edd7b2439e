#!/usr/bin/env node
// Adds lockfile entries for optional platform packages that the registry this project installs
// from does not serve (e.g. biome's and rollup's binaries for other operating systems).
//
// Why: `npm install` skips an optional dependency it cannot fetch and leaves it out of
// package-lock.json, and `npm ci` then rejects the lockfile as out of sync. An entry that names
// the package's platform (os / cpu / libc) keeps `npm ci` exact and lets it skip the package on
// every other platform, as it would with a lockfile written against the full registry.
// Run it after `npm install` whenever dependencies change: `node scripts/complete-lockfile.mjs`.
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const PLATFORM =
  /-(android|darwin|freebsd|linux|netbsd|openbsd|openharmony|sunos|win32|aix)-(arm64|x64|arm|ia32|ppc64|riscv64|s390x|loong64|wasm32)(?:-(gnu|musl|gnueabihf|musleabihf|msvc|eabi))?$/;

let added = 0;
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [name, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    const match = PLATFORM.exec(name);
    if (!match || !/^\d+\.\d+\.\d+$/.test(spec)) continue;
    const here = `${path ? `${path}/` : ''}node_modules/${name}`;
    const hoisted = `node_modules/${name}`;
    if (lock.packages[here] || lock.packages[hoisted]) continue;
    const [, os, cpu, libc] = match;
    lock.packages[hoisted] = {
      version: spec,
      cpu: [cpu],
      license: entry.license,
      optional: true,
      os: [os],
      ...(libc && os === 'linux' ? { libc: [libc.startsWith('musl') ? 'musl' : 'glibc'] } : {}),
    };
    added++;
  }
}
// In npm's own order (localeCompare, 'en'): in code-point order the next `npm install` rewrote it.
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b, 'en'))),
);
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: ${added} platform entr${added === 1 ? 'y' : 'ies'} added`);
