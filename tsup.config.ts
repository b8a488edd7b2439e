import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'tsup';

// One build config for every package. A package may list extra entry points (CLIs) in
// `"tollbooth": { "entry": [...] }` of its package.json; the default is `src/index.ts`.
const pkg = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as {
  tollbooth?: { entry?: string[] | Record<string, string> };
};

export default defineConfig({
  entry: pkg.tollbooth?.entry ?? ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  platform: 'node',
  splitting: false,
});
