import { createHttpFacilitatorClient, type PaymentRequired, type PaymentRequirements } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { createExactEvmFacilitator, createPaymentPayload } from '@tollbooth/evm';
import { HTTPFacilitatorClient } from '@x402/core/server';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningFacilitatorServer, startFacilitatorServer } from './facilitator-server';

let devnet: Devnet;
let server: RunningFacilitatorServer;

beforeAll(async () => {
  devnet = await startDevnet({ chainId: 8453 });
  const facilitator = createExactEvmFacilitator({
    account: devnet.accounts.facilitator.privateKey as Hex,
    chain: devnet.chain,
    rpcUrl: devnet.rpcUrl,
  });
  server = await startFacilitatorServer({ facilitator });
});

afterAll(async () => {
  await server?.close();
  await devnet?.stop();
});

function requirements(amount = '1000'): PaymentRequirements {
  return {
    scheme: 'exact',
    network: 'eip155:8453',
    amount,
    asset: devnet.token.address,
    payTo: devnet.accounts.payTo.address,
    maxTimeoutSeconds: 60,
    extra: { name: devnet.token.name, version: devnet.token.version },
  };
}

async function pay(payerIndex: number, accepted = requirements()) {
  const paymentRequired: PaymentRequired = {
    x402Version: 2,
    resource: { url: 'http://127.0.0.1/paid' },
    accepts: [accepted],
  };
  const account = privateKeyToAccount(devnet.accounts.payers[payerIndex]!.privateKey as Hex);
  return createPaymentPayload({ paymentRequired, account });
}

describe('facilitator HTTP server', () => {
  it('lists its kind and signer at GET /supported', async () => {
    const supported = await createHttpFacilitatorClient({ url: server.url }).supported();
    expect(supported.kinds).toContainEqual(
      expect.objectContaining({ x402Version: 2, scheme: 'exact', network: 'eip155:8453' }),
    );
    expect(Object.values(supported.signers).flat()).toContain(devnet.accounts.facilitator.address);
  });

  it('verifies and settles for the Tollbooth HTTP client, moving exactly the price once', async () => {
    const client = createHttpFacilitatorClient({ url: server.url });
    const payload = await pay(0);
    const payer = devnet.accounts.payers[0]!.address;
    const before = await devnet.balanceOf(payer);
    expect(await client.verify(payload, requirements())).toMatchObject({ isValid: true, payer });
    const receipt = await client.settle(payload, requirements());
    expect(receipt).toMatchObject({ success: true, network: 'eip155:8453', payer });
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(before - (await devnet.balanceOf(payer))).toBe(1000n);
    const again = await client.settle(payload, requirements());
    expect(again.success).toBe(false);
    expect(before - (await devnet.balanceOf(payer))).toBe(1000n);
  });

  it('serves the official x402 HTTPFacilitatorClient', async () => {
    const official = new HTTPFacilitatorClient({ url: server.url });
    const payload = await pay(1);
    const payer = devnet.accounts.payers[1]!.address;
    const before = await devnet.balanceOf(payer);
    // biome-ignore lint/suspicious/noExplicitAny: the official client's types are its own copies of the wire types
    const verified = await official.verify(payload as any, requirements() as any);
    expect(verified.isValid).toBe(true);
    // biome-ignore lint/suspicious/noExplicitAny: as above
    const settled = await official.settle(payload as any, requirements() as any);
    expect(settled.success).toBe(true);
    expect(before - (await devnet.balanceOf(payer))).toBe(1000n);
  });

  it('answers isValid false with the official reason for a tampered amount', async () => {
    const client = createHttpFacilitatorClient({ url: server.url });
    const payload = await pay(2);
    const verdict = await client.verify(payload, requirements('2000'));
    expect(verdict).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_exact_evm_payload_authorization_value_mismatch',
    });
  });

  it.each([
    ['a body that is not JSON', 'not json', /not JSON/],
    [
      'a missing paymentPayload',
      JSON.stringify({ x402Version: 2, paymentRequirements: {} }),
      /paymentPayload/,
    ],
    [
      'an unknown version',
      JSON.stringify({ x402Version: 3, paymentPayload: {}, paymentRequirements: {} }),
      /invalid request/,
    ],
  ])('answers 400 for %s', async (_name, body, message) => {
    const response = await fetch(`${server.url}/verify`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toMatch(message);
  });

  it('answers 413 for an oversized body and 404 for unknown paths', async () => {
    const big = await fetch(`${server.url}/settle`, { method: 'POST', body: 'x'.repeat(70_000) });
    expect(big.status).toBe(413);
    expect((await fetch(`${server.url}/nope`)).status).toBe(404);
    expect((await fetch(`${server.url}/verify`)).status).toBe(405);
  });
});
