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
 * From the first argument: `bare`, `tollbooth`, or `noop` — the bare app with one synchronous
 * middleware (hook) that only calls the next: the framework's own price of one more middleware,
 * the floor of any gate mounted for every request.
 */
export function modeOf(argv: readonly string[]): 'bare' | 'tollbooth' | 'noop' {
  const mode = argv[2] ?? 'bare';
  if (mode !== 'bare' && mode !== 'tollbooth' && mode !== 'noop') throw new Error(`unknown mode ${mode}`);
  return mode;
}
