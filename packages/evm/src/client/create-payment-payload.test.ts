import type { PaymentRequiredV1 } from '@tollbooth/core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { EvmSchemeError } from '../errors';
import { preVerifyExactEvmPayment } from '../server/pre-verify-exact-evm-payment';
import { BASE_USDC, buildPaymentRequired, buildRequirements, PAY_TO } from '../test-fixtures';
import { createPaymentPayload } from './create-payment-payload';

const account = privateKeyToAccount(generatePrivateKey());

describe('createPaymentPayload', () => {
  it('copies resource and the chosen requirement verbatim and echoes extensions (v2)', async () => {
    const solana = {
      ...buildRequirements(),
      network: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
      asset: 'So1',
    };
    const chosen = buildRequirements({ extra: { name: 'USD Coin', version: '2', custom: [1, 2] } });
    const extensions = { bazaar: { info: { input: { type: 'http' } } } };
    const required = buildPaymentRequired([solana, chosen], extensions);
    const payload = await createPaymentPayload({ paymentRequired: required, account, now: 1_800_000_000 });
    expect(payload.x402Version).toBe(2);
    expect(payload.accepted).toBe(chosen);
    expect(payload.resource).toBe(required.resource);
    expect(payload.extensions).toBe(extensions);
    expect(payload.payload).toEqual({
      signature: expect.stringMatching(/^0x[0-9a-f]{130}$/),
      authorization: {
        from: account.address,
        to: PAY_TO,
        value: '10000',
        validAfter: '0',
        validBefore: String(1_800_000_000 + 60),
        nonce: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      },
    });
    expect(preVerifyExactEvmPayment({ payload, requirements: chosen, now: 1_800_000_000 }).ok).toBe(true);
  });

  it('uses a fresh random nonce for every payment', async () => {
    const required = buildPaymentRequired();
    const nonces = new Set<unknown>();
    for (let i = 0; i < 5; i++) {
      const payload = await createPaymentPayload({ paymentRequired: required, account });
      nonces.add((payload.payload as { authorization: { nonce: string } }).authorization.nonce);
    }
    expect(nonces.size).toBe(5);
  });

  it('pays the requirement the select callback picks', async () => {
    const cheap = buildRequirements({ amount: '1' });
    const dear = buildRequirements({ amount: '99' });
    const payload = await createPaymentPayload({
      paymentRequired: buildPaymentRequired([dear, cheap]),
      account,
      select: (payable) => payable.find((r) => r.amount === '1'),
    });
    expect(payload.accepted).toBe(cheap);
  });

  it('throws when no requirement is payable (missing EIP-712 domain)', async () => {
    const required = buildPaymentRequired([buildRequirements({ extra: {} })]);
    await expect(createPaymentPayload({ paymentRequired: required, account })).rejects.toBeInstanceOf(
      EvmSchemeError,
    );
  });

  it('builds a v1 payload for a v1 challenge', async () => {
    const required: PaymentRequiredV1 = {
      x402Version: 1,
      error: 'X-PAYMENT header is required',
      accepts: [
        {
          scheme: 'exact',
          network: 'base',
          maxAmountRequired: '5000',
          resource: 'https://api.example.com/paid',
          description: '',
          mimeType: 'application/json',
          payTo: PAY_TO,
          maxTimeoutSeconds: 30,
          asset: BASE_USDC,
          extra: { name: 'USD Coin', version: '2' },
        },
      ],
    };
    const payload = await createPaymentPayload({ paymentRequired: required, account, now: 1_800_000_000 });
    expect(payload).toEqual({
      x402Version: 1,
      scheme: 'exact',
      network: 'base',
      payload: {
        signature: expect.stringMatching(/^0x[0-9a-f]{130}$/),
        authorization: expect.objectContaining({
          value: '5000',
          validAfter: String(1_800_000_000 - 600),
          validBefore: String(1_800_000_030),
        }),
      },
    });
  });
});
