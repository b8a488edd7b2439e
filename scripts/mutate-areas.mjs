// The areas `npm run mutate` covers: what each mutates and which test files may kill its mutants.
// Test files are chosen per area so the dry run stays short; Stryker then runs, for each mutant,
// only the tests that reached it (coverageAnalysis perTest).
const notTests = ['!**/*.test.ts', '!**/index.ts', '!**/types.ts'];

export const areas = {
  routes: {
    mutate: ['packages/core/src/routes/*.ts', ...notTests],
    tests: ['packages/core/src/routes/*.test.ts', 'packages/core/src/gate/money-boundaries.test.ts'],
  },
  protocol: {
    mutate: ['packages/core/src/protocol/*.ts', ...notTests],
    tests: ['packages/core/src/protocol/*.test.ts', 'packages/core/src/gate/money-boundaries.test.ts'],
  },
  evm: {
    mutate: [
      'packages/evm/src/checks/*.ts',
      'packages/evm/src/facilitator/verify-exact-evm-payment.ts',
      'packages/evm/src/facilitator/settle-exact-evm-payment.ts',
      'packages/evm/src/server/pre-verify-exact-evm-payment.ts',
      ...notTests,
    ],
    tests: [
      'packages/evm/src/checks/*.test.ts',
      'packages/evm/src/facilitator/*.test.ts',
      'packages/evm/src/server/*.test.ts',
      'packages/evm/src/payload/*.test.ts',
    ],
  },
  stores: {
    mutate: [
      'packages/store-sqlite/src/*.ts',
      'packages/store-redis/src/*.ts',
      'packages/store-postgres/src/*.ts',
      ...notTests,
    ],
    tests: ['packages/store-*/src/*.test.ts', 'test/ledger-stores.test.ts'],
  },
  fee: {
    mutate: [
      'examples/fee-service/src/domain/fee-math.ts',
      'examples/fee-service/src/domain/send-wait.ts',
      'examples/fee-service/src/resources/fees/now/build.ts',
      'examples/fee-service/src/resources/fees/preview/build.ts',
      'examples/fee-service/src/domain/derived.ts',
      'examples/fee-service/src/snapshot/service.ts',
    ],
    tests: [
      'examples/fee-service/src/domain/*.test.ts',
      'examples/fee-service/src/resources/fees/now/build.test.ts',
      'examples/fee-service/src/resources/fees/preview/build.test.ts',
      'examples/fee-service/src/snapshot/*.test.ts',
      'examples/fee-service/test/freshness.test.ts',
    ],
  },
  gate: {
    mutate: ['packages/core/src/gate/*.ts', 'packages/core/src/reconciler/*.ts', ...notTests],
    tests: [
      'packages/core/src/gate/*.test.ts',
      'packages/core/src/reconciler/*.test.ts',
      'packages/core/src/routes/compile-routes.test.ts',
    ],
  },
  ledger: {
    mutate: ['packages/core/src/ledger/**/*.ts', 'packages/core/src/http/*.ts', ...notTests],
    tests: [
      'packages/core/src/ledger/**/*.test.ts',
      'packages/core/src/http/*.test.ts',
      'packages/core/src/gate/*.test.ts',
      'packages/core/src/reconciler/*.test.ts',
      'test/ledger-stores.test.ts',
    ],
  },
};
