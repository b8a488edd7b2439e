import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig, type Options } from 'tsup';

// One build config for every package (conventions: docs/packaging.md). A package lists its
// library entry points in `"tollbooth": { "entry": ... }` of its package.json (default
// `src/index.ts`), built as ESM and CommonJS with types for both; and its commands in
// `"tollbooth": { "commands": [...] }`, built as ESM only: a command is run by its launcher in
// `bin/`, never required, and may use top-level await, which CommonJS cannot express.
const pkg = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as {
  tollbooth?: { entry?: string[] | Record<string, string>; commands?: string[] };
};
const commands = pkg.tollbooth?.commands ?? [];

// The two builds below run concurrently, so neither may clean dist/ itself.
rmSync(join(process.cwd(), 'dist'), { recursive: true, force: true });

const entry = pkg.tollbooth?.entry ?? ['src/index.ts'];
const entryCount = Array.isArray(entry) ? entry.length : Object.keys(entry).length;

const shared: Options = {
  sourcemap: true,
  target: 'node20',
  platform: 'node',
  // Entry points of one package share their modules through chunks (ESM and CommonJS alike), so
  // `@tollbooth/core/discovery` throws the very `TollboothError` class `@tollbooth/core` exports.
  // Only where there are several: a split CommonJS build keeps `import.meta` (a syntax error in
  // CommonJS), which the evm package's `typeof __filename` guard relies on being rewritten.
  splitting: entryCount > 1,
};

export default defineConfig([
  { ...shared, entry, format: ['esm', 'cjs'], dts: true },
  ...(commands.length > 0 ? [{ ...shared, entry: commands, format: ['esm' as const], dts: false }] : []),
]);
