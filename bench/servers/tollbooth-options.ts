// The gate options every Tollbooth benchmark server uses: the paid route (plus filler routes for
// the scaling runs), the real exact-EVM scheme (native signature recovery unless
// BENCH_RECOVERY=noble) and the instant facilitator double.
import {
  createPaymentGate,
  type GateResponse,
  type PaymentGateOptions,
  type RoutesConfig,
} from '@tollbooth/core';
import { createExactEvmScheme } from '@tollbooth/evm';
import { benchRoutes, createInstantFacilitator, HELLO_BODY, PAID_PATH } from '../lib/fixtures';
import { benchChallenge, benchPayers, signPaymentPool } from '../lib/payments';

export function tollboothOptions(): PaymentGateOptions & { routes: RoutesConfig } {
  const backend = process.env['BENCH_RECOVERY'] === 'noble' ? 'noble' : 'native';
  return {
    routes: benchRoutes(Number(process.env['BENCH_ROUTES'] ?? 0)),
    schemes: [createExactEvmScheme({ recoveryBackend: backend })],
    facilitator: createInstantFacilitator(),
  };
}

export type ServerMode = 'bare' | 'tollbooth' | 'noop' | 'bytes402' | 'bytesreplay';
const MODES: readonly ServerMode[] = ['bare', 'tollbooth', 'noop', 'bytes402', 'bytesreplay'];

/**
 * From the first argument: `bare`, `tollbooth`, `noop` — the bare app with one synchronous
 * middleware (hook) that only calls the next: the framework's own price of one more middleware,
 * the floor of any gate mounted for every request — or `bytes402`: the bare app whose paid route's
 * handler writes the gate's 402 (status, headers and body, computed once at start-up): the
 * framework's own price of sending that bigger response, without any gate; or `bytesreplay`: the
 * same with the response the gate replays for a settled payment (hello's body, its receipt).
 */
export function modeOf(argv: readonly string[]): ServerMode {
  const mode = (argv[2] ?? 'bare') as ServerMode;
  if (!MODES.includes(mode)) throw new Error(`unknown mode ${mode}`);
  return mode;
}

/** The 402 the gate answers on the paid route (its request id aside, the same bytes every time). */
export async function challengeResponse(): Promise<GateResponse> {
  const gate = createPaymentGate(tollboothOptions());
  const outcome = await gate.handle({
    method: 'GET',
    url: 'http://127.0.0.1/paid',
    header: () => undefined,
  });
  await gate.ledger.close();
  if (outcome.kind !== 'respond' || outcome.response.status !== 402)
    throw new Error(`the gate answered ${outcome.kind} on the paid route`);
  return outcome.response;
}

/**
 * What the gate sends again for a byte-identical replay of a settled payment on the paid route
 * (hello's body, the receipt header, the expose list): one payment signed, settled and replayed.
 */
export async function replayResponse(): Promise<GateResponse> {
  const gate = createPaymentGate(tollboothOptions());
  const { headers } = await signPaymentPool({
    count: 1,
    challenge: benchChallenge(),
    accounts: benchPayers(1),
  });
  const view = {
    method: 'GET',
    url: `http://127.0.0.1${PAID_PATH}`,
    header: (name: string) => (name === 'payment-signature' ? headers[0] : undefined),
  };
  const first = await gate.handle(view);
  if (first.kind !== 'proceed') throw new Error(`the gate answered ${first.kind} to a valid payment`);
  const body = Buffer.from(JSON.stringify(HELLO_BODY));
  await first.settle({
    status: 200,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body,
  });
  const again = await gate.handle(view);
  await gate.ledger.close();
  if (again.kind !== 'replay') throw new Error(`the gate answered ${again.kind} to a replay`);
  return again.response;
}

/** The fixed response a `bytes402` or `bytesreplay` server writes; none for the other modes. */
export async function fixedResponse(mode: ServerMode): Promise<GateResponse | undefined> {
  if (mode === 'bytes402') return challengeResponse();
  if (mode === 'bytesreplay') return replayResponse();
  return undefined;
}
