import type { PaymentPayload, PaymentRequirements } from '@tollbooth/core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import { signTransferAuthorization } from '../client/sign-transfer-authorization';
import { ExactEvmReason } from '../constants';
import type { TransferAuthorization } from '../signature/hash-transfer-authorization';
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
    expect(result).toEqual({
      ok: false,
      reason: ExactEvmReason.valueMismatch,
      message: 'authorization value 9999 is not the required 10000',
    });
  });

  it('refuses a payment to another recipient', async () => {
    const other = privateKeyToAccount(generatePrivateKey()).address;
    const payment = await buildPayment(account, buildRequirements({ payTo: other }));
    // Authentic, but not a question of time: the gate is not told who it is.
    expect(
      preVerifyExactEvmPayment({ payload: payment, requirements: buildRequirements(), now: now() }),
    ).toEqual({
      ok: false,
      reason: ExactEvmReason.recipientMismatch,
      message: `authorization pays ${other}, not ${PAY_TO}`,
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
    const validBefore = Number(
      (payment.payload as { authorization: { validBefore: string } }).authorization.validBefore,
    );
    expect(preVerifyExactEvmPayment({ payload: payment, requirements, now: validBefore - 5 })).toMatchObject({
      ok: false,
      reason: ExactEvmReason.validBefore,
      message: `authorization expires at ${validBefore}, less than 6 s from now`,
    });
    // Exactly 6 s left still passes (validBefore ≥ now + 6).
    expect(preVerifyExactEvmPayment({ payload: payment, requirements, now: validBefore - 6 }).ok).toBe(true);
  });

  it('refuses an authorization that is not valid yet', async () => {
    const requirements = buildRequirements();
    const payment = await buildPayment(account, requirements);
    // validAfter is 0 in a v2 payment; check it against a clock before the epoch's first second.
    const result = preVerifyExactEvmPayment({ payload: payment, requirements, now: -1 });
    const auth = (payment.payload as { authorization: { nonce: string; validBefore: string } }).authorization;
    // Authentic and only early: the gate is told who it is, as for an expired one.
    expect(result).toEqual({
      ok: false,
      reason: ExactEvmReason.validAfter,
      message: 'authorization is not valid before 0',
      known: {
        identity: `exact:eip155:8453:${BASE_USDC}:${account.address}:${auth.nonce}`.toLowerCase(),
        payer: account.address,
        validBefore: Number(auth.validBefore),
      },
    });
    // From its validAfter second on (validAfter ≤ now), it passes.
    expect(preVerifyExactEvmPayment({ payload: payment, requirements, now: 0 }).ok).toBe(true);
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
    expect(result).toEqual({
      ok: false,
      reason: ExactEvmReason.signature,
      message: 'signature is not a valid low-s ECDSA signature',
    });
  });

  it('passes a smart-wallet signature (not 65 bytes) on to the facilitator, as not authenticated', async () => {
    const requirements = buildRequirements();
    const payment = await buildPayment(account, requirements);
    const payload = payment.payload as {
      signature: string;
      authorization: { nonce: string; validBefore: string };
    };
    const erc1271 = { ...payment, payload: { ...payload, signature: `0x${'ab'.repeat(97)}` } };
    expect(preVerifyExactEvmPayment({ payload: erc1271, requirements, now: now() })).toEqual({
      ok: true,
      payer: account.address,
      identity:
        `exact:eip155:8453:${BASE_USDC}:${account.address}:${payload.authorization.nonce}`.toLowerCase(),
      validBefore: Number(payload.authorization.validBefore),
      authenticated: false,
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

  it('names the key that made a signature for someone else', async () => {
    const requirements = buildRequirements();
    const payment = await buildPayment(account, requirements);
    const other = privateKeyToAccount(generatePrivateKey());
    const { authorization } = payment.payload as { authorization: TransferAuthorization };
    const signature = await signTransferAuthorization({
      account: other,
      domain: { name: 'USD Coin', version: '2', chainId: 8453, verifyingContract: BASE_USDC },
      authorization,
    });
    const forged = { ...payment, payload: { signature, authorization } };
    expect(preVerifyExactEvmPayment({ payload: forged, requirements, now: now() })).toEqual({
      ok: false,
      reason: ExactEvmReason.signature,
      message: `signature was made by ${other.address.toLowerCase()}, not by ${account.address}`,
    });
  });

  it('names no payer for a payment outside its time window whose signature was not checked here', async () => {
    const requirements = buildRequirements();
    const payment = await buildPayment(account, requirements, now() - 600);
    const payload = payment.payload as { signature: string };
    // A smart-wallet signature, and a 65-byte one by another key deferred to the facilitator.
    const erc1271 = { ...payment, payload: { ...payload, signature: `0x${'ab'.repeat(97)}` } };
    const expired = { ok: false, reason: ExactEvmReason.validBefore };
    const unchecked = preVerifyExactEvmPayment({ payload: erc1271, requirements, now: now() });
    expect(unchecked).toMatchObject(expired);
    expect(unchecked).not.toHaveProperty('known');
    const forged = { ...payment, payload: { ...payload, signature: `0x${'11'.repeat(65)}` } };
    const deferred = preVerifyExactEvmPayment({
      payload: forged,
      requirements,
      now: now(),
      deferMismatchedSignaturesToFacilitator: true,
    });
    expect(deferred).toMatchObject(expired);
    expect(deferred).not.toHaveProperty('known');
  });

  it('refuses an authorization whose from address has a broken checksum as unhashable', async () => {
    const requirements = buildRequirements();
    const payment = await buildPayment(account, requirements);
    // Every letter's case swapped: still 20 bytes of hex, but no longer a valid checksummed address.
    const from = `0x${account.address.slice(2).replace(/[a-f]/gi, (c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()))}`;
    const result = preVerifyExactEvmPayment({ payload: tamper(payment, { from }), requirements, now: now() });
    expect(result).toMatchObject({ ok: false, reason: ExactEvmReason.signature });
    expect((result as { message: string }).message).toMatch(/^cannot hash the authorization: \S/);
    expect((result as { message: string }).message).toContain(from);
  });

  it('accepts a requirement whose asset is spelled in any letter case', async () => {
    const requirements = buildRequirements();
    const payment = await buildPayment(account, requirements);
    for (const asset of [BASE_USDC.toLowerCase(), `0x${BASE_USDC.slice(2).toUpperCase()}`]) {
      expect(
        preVerifyExactEvmPayment({ payload: payment, requirements: { ...requirements, asset }, now: now() }),
      ).toMatchObject({ ok: true, authenticated: true });
    }
  });

  it.each<[string, Record<string, unknown>, string, string]>([
    [
      'a scheme other than exact',
      { scheme: 'upto' },
      ExactEvmReason.scheme,
      'scheme must be "exact" (payment: exact)',
    ],
    ['no extra', { extra: undefined }, ExactEvmReason.missingEip712Domain, MISSING_DOMAIN],
    [
      'a name that is no string',
      { extra: { name: 1, version: '2' } },
      ExactEvmReason.missingEip712Domain,
      MISSING_DOMAIN,
    ],
    [
      'an empty name',
      { extra: { name: '', version: '2' } },
      ExactEvmReason.missingEip712Domain,
      MISSING_DOMAIN,
    ],
    [
      'a version that is no string',
      { extra: { name: 'USD Coin', version: 2 } },
      ExactEvmReason.missingEip712Domain,
      MISSING_DOMAIN,
    ],
    [
      'an empty version',
      { extra: { name: 'USD Coin', version: '' } },
      ExactEvmReason.missingEip712Domain,
      MISSING_DOMAIN,
    ],
    [
      'an asset that is no address',
      { asset: 'USDC' },
      ExactEvmReason.missingEip712Domain,
      'asset "USDC" is not a token address',
    ],
    ['no asset', { asset: undefined }, ExactEvmReason.missingEip712Domain, 'asset "" is not a token address'],
    [
      'no network',
      { network: undefined },
      ExactEvmReason.networkMismatch,
      'payment network eip155:8453, but the requirement names no network',
    ],
    [
      'no payTo',
      { payTo: undefined },
      ExactEvmReason.recipientMismatch,
      `authorization pays ${PAY_TO}, not `,
    ],
    [
      'no amount',
      { amount: undefined },
      ExactEvmReason.valueMismatch,
      'authorization value 10000 is not the required ',
    ],
    [
      'a hex amount',
      { amount: '0x2710' },
      ExactEvmReason.valueMismatch,
      'authorization value 10000 is not the required 0x2710',
    ],
    [
      'an amount with a sign',
      { amount: '+10000' },
      ExactEvmReason.valueMismatch,
      'authorization value 10000 is not the required +10000',
    ],
    [
      'an amount with a space',
      { amount: '10000 ' },
      ExactEvmReason.valueMismatch,
      'authorization value 10000 is not the required 10000 ',
    ],
    [
      'an amount with a unit',
      { amount: '10000usdc' },
      ExactEvmReason.valueMismatch,
      'authorization value 10000 is not the required 10000usdc',
    ],
  ])(
    'refuses against a requirement with %s, naming what is wrong',
    async (_label, patch, reason, message) => {
      const requirements = buildRequirements();
      const payment = await buildPayment(account, requirements);
      const server = { ...requirements, ...patch } as PaymentRequirements;
      expect(preVerifyExactEvmPayment({ payload: payment, requirements: server, now: now() })).toEqual({
        ok: false,
        reason,
        message,
      });
    },
  );

  it.each([
    ['a network that is not eip155', 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp'],
    ['chain id 0', 'eip155:0'],
    ['an unknown v1 network name', 'base-mainnet'],
  ])('refuses a payment and requirement on %s with network_mismatch', async (_label, network) => {
    const requirements = buildRequirements();
    const payment = await buildPayment(account, requirements);
    const elsewhere = { ...payment, accepted: { ...payment.accepted, network } } as PaymentPayload;
    expect(
      preVerifyExactEvmPayment({
        payload: elsewhere,
        requirements: { ...requirements, network },
        now: now(),
      }),
    ).toEqual({
      ok: false,
      reason: ExactEvmReason.networkMismatch,
      message: `network ${network} is no EVM chain this scheme settles on (eip155:<chain id>)`,
    });
  });

  it.each<[string, unknown]>([
    ['no payload', undefined],
    ['a payload of null', null],
    ['a payload without authorization', { signature: `0x${'11'.repeat(65)}` }],
  ])('refuses %s as invalid_payload', async (_label, raw) => {
    const requirements = buildRequirements();
    const payment = await buildPayment(account, requirements);
    expect(
      preVerifyExactEvmPayment({
        payload: { ...payment, payload: raw } as PaymentPayload,
        requirements,
        now: now(),
      }),
    ).toMatchObject({ ok: false, reason: ExactEvmReason.invalidPayload });
  });
});

const MISSING_DOMAIN = 'requirement extra must carry the EIP-712 name and version';
