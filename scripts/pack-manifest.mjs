#!/usr/bin/env node
// Writes a package's published manifest before npm packs it and puts the workspace manifest back
// afterwards. Run from a package directory by its lifecycle scripts (docs/packaging.md):
//   "prepack": "npm run build && node ../../scripts/pack-manifest.mjs prepack"
//   "postpack": "node ../../scripts/pack-manifest.mjs postpack"
//   "postpublish": "node ../../scripts/pack-manifest.mjs postpublish"
//
// Why: npm packs package.json as it is on disk, and the workspace manifest carries what only the
// repository uses: the `tollbooth-source` export condition (tests, type checks and tsx run the
// TypeScript sources through it; a consumer's bundler must never resolve it to files that are not
// shipped), the build config (`tollbooth`), the scripts and devDependencies. `npm publish` reads
// the manifest again after packing, so under publish the workspace manifest comes back only in
// `postpublish`. The root LICENSE is copied in for the tarball and removed again.
import { copyFileSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';

const MANIFEST = 'package.json';
const KEPT = `${MANIFEST}.workspace`;
const LICENSE = 'LICENSE';
const WORKSPACE_ONLY_FIELDS = ['scripts', 'devDependencies', 'tollbooth'];
const WORKSPACE_CONDITION = 'tollbooth-source';

/** The export map without the workspace-only condition, at any depth. */
function withoutWorkspaceCondition(exports) {
  if (typeof exports !== 'object' || exports === null) return exports;
  return Object.fromEntries(
    Object.entries(exports)
      .filter(([key]) => key !== WORKSPACE_CONDITION)
      .map(([key, value]) => [key, withoutWorkspaceCondition(value)]),
  );
}

function restore() {
  if (existsSync(KEPT)) renameSync(KEPT, MANIFEST);
  rmSync(LICENSE, { force: true });
}

function prepack() {
  // A pack that died before its postpack left the published manifest in place: start from the
  // workspace one again.
  restore();
  const text = readFileSync(MANIFEST, 'utf8');
  const manifest = JSON.parse(text);
  writeFileSync(KEPT, text);
  const published = { ...manifest, exports: withoutWorkspaceCondition(manifest.exports) };
  for (const field of WORKSPACE_ONLY_FIELDS) delete published[field];
  writeFileSync(MANIFEST, `${JSON.stringify(published, null, 2)}\n`);
  copyFileSync(new URL('../LICENSE', import.meta.url), LICENSE);
}

const step = process.argv[2];
if (step === 'prepack') prepack();
else if (step === 'postpack') {
  const publishing = process.env['npm_command'] === 'publish' && process.env['npm_config_dry_run'] !== 'true';
  if (!publishing) restore();
} else if (step === 'postpublish') restore();
else {
  console.error('usage: pack-manifest.mjs prepack|postpack|postpublish');
  process.exit(2);
}
