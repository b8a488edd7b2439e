// What every benchmark server and measurement shares: the paid route, the payment terms and a
// facilitator double that answers at once (it stands in for an outside service, so the figures
// show the middleware's own cost, not a facilitator's).
import type { FacilitatorClient, RoutesConfig, SettleResponse } from '@tollbooth/core';

export const NETWORK = 'eip155:8453';
/** Recipient of every benchmark payment (anvil account 2, never holds anything here). */
export const PAY_TO = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';
/** $0.001 in Base USDC, resolved by the exact EVM scheme's default asset table. */
export const PRICE = '$0.001';
/** Long enough that pre-signed payments stay valid through a full run. */
export const MAX_TIMEOUT_SECONDS = 3600;

export const HELLO_PATH = '/hello';
export const PAID_PATH = '/paid';
export const HELLO_BODY = { hello: 'world' };
/** The paid tool of the MCP benchmark server (`bench/servers/mcp.ts`). */
export const MCP_TOOL = 'paid';
/** The headers of a streamable HTTP POST to an MCP endpoint (a tools/call of `MCP_TOOL`). */
export const MCP_HEADERS = {
  accept: 'application/json, text/event-stream',
  'content-type': 'application/json',
};

/** The paid route, plus `extraRoutes` more paid routes (scaling runs) that sort before it. */
export function benchRoutes(extraRoutes = 0): RoutesConfig {
  const route = {
    accepts: { network: NETWORK, payTo: PAY_TO, price: PRICE, maxTimeoutSeconds: MAX_TIMEOUT_SECONDS },
    description: 'a benchmark resource',
  };
  const routes: RoutesConfig = {};
  // Longer literal paths sort first in the route table: `/paid` is matched last (worst case).
  for (let i = 0; i < extraRoutes; i++) routes[`GET ${PAID_PATH}-route-${i}`] = route;
  routes[`GET ${PAID_PATH}`] = route;
  return routes;
}

const TX = `0x${'ab'.repeat(32)}`;

/** A facilitator that verifies and settles everything at once, without any I/O. */
export function createInstantFacilitator(): FacilitatorClient & { settles: number } {
  const double = {
    settles: 0,
    async verify(payload: Parameters<FacilitatorClient['verify']>[0]) {
      return { isValid: true, payer: payerOf(payload) };
    },
    async settle(payload: Parameters<FacilitatorClient['settle']>[0]): Promise<SettleResponse> {
      double.settles++;
      return { success: true, transaction: TX, network: NETWORK, payer: payerOf(payload) };
    },
    async supported() {
      return { kinds: [{ x402Version: 2, scheme: 'exact', network: NETWORK }], extensions: [], signers: {} };
    },
  };
  return double;
}

function payerOf(payload: { payload: Record<string, unknown> }): string | undefined {
  return (payload.payload['authorization'] as { from?: string } | undefined)?.from;
}
