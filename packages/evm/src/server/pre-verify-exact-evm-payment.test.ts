import type { PaymentPayload } from '@tollbooth/core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { ExactEvmReason } from '../constants';
import { BASE_USDC, buildPayment, buildRequirements, PAY_TO, tamper } from '../test-fixtures';
import { preVerifyExactEvmPayment } from './pre-verify-exact-evm-payment';

const account = privateKeyToAccount(generatePrivateKey());
const now = () => Math.floor(Date.now() / 1000);

describe('preVerifyExactEvmPayment', () => {
  it('accepts a payment signed for the requirement and returns payer, identity and validBefore', async () => {
    const requirements = buildRequirements();
    const payment = await buildPayment(account, requirements);
    const result = preVerifyExactEvmPayment({ payload: payment, requirements, now: now() });
    const auth = (payment.payload as { authorization: { nonce: string; validBefore: string } }).authorization;
    expect(result).toEqual({
      ok: true,
      payer: account.address,
      identity: `exact:eip155:8453:${BASE_USDC}:${account.address}:${auth.nonce}`.toLowerCase(),
      validBefore: Number(auth.validBefore),
      authenticated: true,
    });
  });

  it('names an authentic but expired payment so the gate can ask its ledger', async () => {
    const requirements = buildRequirements();
    const payment = await buildPayment(account, requirements, now() - 600);
    const result = preVerifyExactEvmPayment({ payload: payment, requirements, now: now() });
    const auth = (payment.payload as { authorization: { nonce: string; validBefore: string } }).authorization;
    expect(result).toMatchObject({
      ok: false,
      reason: ExactEvmReason.validBefore,
      known: {
        identity: `exact:eip155:8453:${BASE_USDC}:${account.address}:${auth.nonce}`.toLowerCase(),
        payer: account.address,
        validBefore: Number(auth.validBefore),
      },
    });
    // A forged signature over the same authorization is not named.
    const forged = { ...payment, payload: { ...payment.payload, signature: `0x${'11'.repeat(65)}` } };
    expect(preVerifyExactEvmPayment({ payload: forged, requirements, now: now() })).not.toHaveProperty(
      'known',
    );
  });

  it.each(['native', 'noble'] as const)('gives the same verdict with the %s backend', async (backend) => {
    const requirements = buildRequirements();
    const payment = await buildPayment(account, requirements);
    expect(preVerifyExactEvmPayment({ payload: payment, requirements, now: now(), backend }).ok).toBe(true);
    const forged = tamper(payment, { value: '10001' });
    const bad = preVerifyExactEvmPayment({
      payload: forged,
      requirements: { ...requirements, amount: '10001' },
      now: now(),
      backend,
    });
    expect(bad).toMatchObject({ ok: false, reason: ExactEvmReason.signature });
  });

  it('refuses a tampered amount as a signature failure (the value is signed)', async () => {
    const requirements = buildRequirements();
    const payment = tamper(await buildPayment(account, requirements), { value: '1' });
    expect(preVerifyExactEvmPayment({ payload: payment, requirements, now: now() })).toMatchObject({
      ok: false,
      reason: ExactEvmReason.signature,
    });
  });

  it('refuses an authorization for another amount with value_mismatch', async () => {
    const payment = await buildPayment(account, buildRequirements({ amount: '9999' }));
    const result = preVerifyExactEvmPayment({
      payload: payment,
      requirements: buildRequirements(),
      now: now(),
    });
    // `accepted` differs too, but preVerify judges the signed authorization against the server's requirement.
    expect(result).toMatchObject({ ok: false, reason: ExactEvmReason.valueMismatch });
  });

  it('refuses a payment to another recipient', async () => {
    const other = privateKeyToAccount(generatePrivateKey()).address;
    const payment = await buildPayment(account, buildRequirements({ payTo: other }));
    expect(
      preVerifyExactEvmPayment({ payload: payment, requirements: buildRequirements(), now: now() }),
    ).toMatchObject({
      ok: false,
      reason: ExactEvmReason.recipientMismatch,
    });
  });

  it('accepts a recipient that differs only in letter case', async () => {
    const requirements = buildRequirements();
    const payment = await buildPayment(account, requirements);
    const lower = buildRequirements({ payTo: PAY_TO.toLowerCase() });
    expect(preVerifyExactEvmPayment({ payload: payment, requirements: lower, now: now() }).ok).toBe(true);
  });

  it('refuses a signature made under another EIP-712 name', async () => {
    const payment = await buildPayment(account, buildRequirements({ extra: { name: 'USDC', version: '2' } }));
    expect(
      preVerifyExactEvmPayment({ payload: payment, requirements: buildRequirements(), now: now() }),
    ).toMatchObject({
      ok: false,
      reason: ExactEvmReason.signature,
    });
  });

  it('refuses an authorization that expires in less than 6 seconds', async () => {
    const requirements = buildRequirements({ maxTimeoutSeconds: 60 });
    const payment = await buildPayment(account, requirements, now() - 55);
    expect(preVerifyExactEvmPayment({ payload: payment, requirements, now: now() })).toMatchObject({
      ok: false,
      reason: ExactEvmReason.validBefore,
    });
    // Exactly 6 s left still passes (validBefore ≥ now + 6).
    const validBefore = Number(
      (payment.payload as { authorization: { validBefore: string } }).authorization.validBefore,
    );
    expect(preVerifyExactEvmPayment({ payload: payment, requirements, now: validBefore - 6 }).ok).toBe(true);
  });

  it('refuses an authorization that is not valid yet', async () => {
    const requirements = buildRequirements();
    const payment = await buildPayment(account, requirements);
    // validAfter is 0 in a v2 payment; check it against a clock before the epoch's first second.
    const result = preVerifyExactEvmPayment({ payload: payment, requirements, now: -1 });
    expect(result).toMatchObject({ ok: false, reason: ExactEvmReason.validAfter });
  });

  it('refuses a payment on another network', async () => {
    const payment = await buildPayment(account, buildRequirements({ network: 'eip155:84532' }));
    expect(
      preVerifyExactEvmPayment({ payload: payment, requirements: buildRequirements(), now: now() }),
    ).toMatchObject({
      ok: false,
      reason: ExactEvmReason.networkMismatch,
    });
  });

  it('refuses a payment signed for another asset as a signature failure', async () => {
    const other = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
    const payment = await buildPayment(account, buildRequirements({ asset: other }));
    expect(
      preVerifyExactEvmPayment({ payload: payment, requirements: buildRequirements(), now: now() }),
    ).toMatchObject({
      ok: false,
      reason: ExactEvmReason.signature,
    });
  });

  it('checks in the official order: scheme before network before signature before recipient', async () => {
    const requirements = buildRequirements();
    const payment = await buildPayment(account, requirements);
    const everythingWrong: PaymentPayload = {
      ...tamper(payment, { to: account.address, value: '1' }),
      accepted: { ...payment.accepted, scheme: 'upto', network: 'eip155:1' },
    };
    const check = (p: PaymentPayload) => preVerifyExactEvmPayment({ payload: p, requirements, now: now() });
    expect(check(everythingWrong)).toMatchObject({ reason: ExactEvmReason.scheme });
    expect(
      check({ ...everythingWrong, accepted: { ...everythingWrong.accepted, scheme: 'exact' } }),
    ).toMatchObject({
      reason: ExactEvmReason.networkMismatch,
    });
    expect(check({ ...everythingWrong, accepted: payment.accepted })).toMatchObject({
      reason: ExactEvmReason.signature,
    });
    expect(
      preVerifyExactEvmPayment({
        payload: payment,
        requirements: { ...requirements, extra: {} },
        now: now(),
      }),
    ).toMatchObject({ reason: ExactEvmReason.missingEip712Domain });
  });

  it.each([
    ['a missing signature', { authorization: {} }],
    ['a short nonce', { signature: '0x00', authorization: { nonce: '0x01' } }],
    ['a negative value', { authorization: { value: '-1' } }],
    ['a value beyond uint256', { authorization: { value: '9'.repeat(80) } }],
  ])('refuses a payload with %s as invalid_payload', async (_label, patch) => {
    const requirements = buildRequirements();
    const payment = await buildPayment(account, requirements);
    const payload = payment.payload as { signature: string; authorization: Record<string, string> };
    const broken = {
      ...payment,
      payload: {
        ...('signature' in patch ? { signature: patch.signature } : {}),
        authorization: { ...payload.authorization, ...patch.authorization },
      },
    };
    expect(preVerifyExactEvmPayment({ payload: broken, requirements, now: now() })).toMatchObject({
      ok: false,
      reason: 'invalid_payload',
    });
  });

  it('refuses a high-s (malleated) signature that a token would reject', async () => {
    const requirements = buildRequirements();
    const payment = await buildPayment(account, requirements);
    const payload = payment.payload as { signature: string };
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const sig = payload.signature;
    const s = BigInt(`0x${sig.slice(66, 130)}`);
    const v = Number.parseInt(sig.slice(130), 16);
    const malleated = `${sig.slice(0, 66)}${(n - s).toString(16).padStart(64, '0')}${(v === 27 ? 28 : 27).toString(16)}`;
    const result = preVerifyExactEvmPayment({
      payload: { ...payment, payload: { ...payload, signature: malleated } },
      requirements,
      now: now(),
    });
    expect(result).toMatchObject({ ok: false, reason: ExactEvmReason.signature });
  });

  it('passes a smart-wallet signature (not 65 bytes) on to the facilitator', async () => {
    const requirements = buildRequirements();
    const payment = await buildPayment(account, requirements);
    const payload = payment.payload as { signature: string };
    const erc1271 = { ...payment, payload: { ...payload, signature: `0x${'ab'.repeat(97)}` } };
    expect(preVerifyExactEvmPayment({ payload: erc1271, requirements, now: now() })).toMatchObject({
      ok: true,
      payer: account.address,
    });
  });

  it('identifies a payment by payer and nonce, not by signature bytes', async () => {
    const requirements = buildRequirements();
    const a = await buildPayment(account, requirements);
    const b = await buildPayment(account, requirements);
    const idA = preVerifyExactEvmPayment({ payload: a, requirements, now: now() });
    const idB = preVerifyExactEvmPayment({ payload: b, requirements, now: now() });
    expect(idA.ok && idB.ok && idA.identity !== idB.identity).toBe(true);
  });
});
