import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Used by `npm run mutate` only (stryker.config.mjs). Stryker copies the project into a sandbox
// and links the checkout's node_modules into it, so `@tollbooth/core` would resolve to the
// checkout's sources and never reach a mutant: each workspace package is aliased to the
// sandbox's own `src` here, relative to this file.
const root = fileURLToPath(new URL('.', import.meta.url));
const alias = [
  { find: /^@tollbooth\/core\/testing$/, replacement: `${root}packages/core/src/test-support/index.ts` },
];
for (const dir of ['packages', 'examples']) {
  for (const name of readdirSync(`${root}${dir}`)) {
    alias.push({
      find: new RegExp(`^@tollbooth/${name}$`),
      replacement: `${root}${dir}/${name}/src/index.ts`,
    });
  }
}

export default defineConfig({
  resolve: { conditions: ['tollbooth-source'], alias },
  ssr: { resolve: { conditions: ['tollbooth-source'] } },
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    include: [
      'packages/*/src/**/*.test.ts',
      'examples/*/src/**/*.test.ts',
      'test/**/*.test.ts',
      'examples/*/test/**/*.test.ts',
    ],
  },
});
