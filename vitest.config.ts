import { defineConfig } from 'vitest/config';

// Tests run against the TypeScript sources: the `tollbooth-source` export condition points every
// workspace package at its `src/index.ts`, so nothing has to be built before `npm test`.
const shared = {
  resolve: { conditions: ['tollbooth-source'] },
  ssr: { resolve: { conditions: ['tollbooth-source'] } },
};

export default defineConfig({
  ...shared,
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['packages/*/src/**/*.test.ts', 'examples/*/src/**/*.test.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts', 'examples/*/test/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
