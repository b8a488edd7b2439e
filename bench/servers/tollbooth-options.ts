// The gate options every Tollbooth benchmark server uses: the paid route (plus filler routes for
// the scaling runs), the real exact-EVM scheme (native signature recovery unless
// BENCH_RECOVERY=noble) and the instant facilitator double.
import type { PaymentGateOptions, RoutesConfig } from '@tollbooth/core';
import { createExactEvmScheme } from '@tollbooth/evm';
import { benchRoutes, createInstantFacilitator } from '../lib/fixtures';

export function tollboothOptions(): PaymentGateOptions & { routes: RoutesConfig } {
  const backend = process.env['BENCH_RECOVERY'] === 'noble' ? 'noble' : 'native';
  return {
    routes: benchRoutes(Number(process.env['BENCH_ROUTES'] ?? 0)),
    schemes: [createExactEvmScheme({ recoveryBackend: backend })],
    facilitator: createInstantFacilitator(),
  };
}

/**
 * From the first argument: `bare`, `tollbooth`, or `hook` — the bare app with an empty async
 * hook/middleware that awaits once, the floor of any gate that decides asynchronously.
 */
export function modeOf(argv: readonly string[]): 'bare' | 'tollbooth' | 'hook' {
  const mode = argv[2] ?? 'bare';
  if (mode !== 'bare' && mode !== 'tollbooth' && mode !== 'hook') throw new Error(`unknown mode ${mode}`);
  return mode;
}

/** What the `hook` mode awaits: an already settled promise, like a gate answering at once. */
export const settled = Promise.resolve();
