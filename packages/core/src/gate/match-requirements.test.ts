import { describe, expect, it } from 'vitest';
import type { PaymentRequirements } from '../protocol/schemas';
import { TEST_ASSET, TEST_PAY_TO } from '../test-support/simple-scheme';
import { codeForReason, findRequirement, requirementMatches } from './match-requirements';

const requirement = (overrides: Partial<PaymentRequirements> = {}): PaymentRequirements => ({
  scheme: 'exact',
  network: 'eip155:8453',
  amount: '1000',
  asset: TEST_ASSET,
  payTo: TEST_PAY_TO,
  maxTimeoutSeconds: 60,
  extra: { name: 'USD Coin', version: '2' },
  ...overrides,
});

describe('requirementMatches', () => {
  it('matches an identical requirement, and one whose extra carries more keys', () => {
    expect(requirementMatches(requirement(), requirement())).toBe(true);
    expect(
      requirementMatches(requirement(), requirement({ extra: { name: 'USD Coin', version: '2', more: 1 } })),
    ).toBe(true);
  });

  it.each([
    ['scheme', { scheme: 'upto' }],
    ['network', { network: 'eip155:1' }],
    ['amount', { amount: '1001' }],
    ['asset', { asset: TEST_ASSET.toLowerCase() }],
    ['payTo in lower case', { payTo: TEST_PAY_TO.toLowerCase() }],
    ['maxTimeoutSeconds', { maxTimeoutSeconds: 61 }],
  ] as const)('does not match another %s', (_field, overrides) => {
    expect(requirementMatches(requirement(), requirement(overrides))).toBe(false);
  });

  it.each([
    ['a missing key', { name: 'USD Coin' }],
    ['another value', { name: 'USD Coin', version: '1' }],
    ['no extra at all', undefined],
  ])('does not match a client extra with %s', (_what, extra) => {
    const accepted = requirement();
    if (extra === undefined) delete (accepted as { extra?: unknown }).extra;
    else accepted.extra = extra;
    expect(requirementMatches(requirement(), accepted)).toBe(false);
  });

  it('takes a server without extra against any client extra', () => {
    const server = requirement();
    delete (server as { extra?: unknown }).extra;
    expect(requirementMatches(server, requirement())).toBe(true);
  });

  it.each([
    ['equal nested objects', { d: { a: 1, b: [1, { c: 'x' }] } }, { d: { b: [1, { c: 'x' }], a: 1 } }, true],
    ['equal arrays', { d: [1, 2] }, { d: [1, 2] }, true],
    ['null on both sides', { d: null }, { d: null }, true],
    ['a nested value that differs', { d: { a: 1 } }, { d: { a: 2 } }, false],
    ['one of two nested values that differs', { d: { a: 1, b: 2 } }, { d: { a: 1, b: 3 } }, false],
    ['two different numbers', { d: 1 }, { d: 2 }, false],
    ['a string against an object holding its characters', { d: 'ab' }, { d: { 0: 'a', 1: 'b' } }, false],
    ['an object holding characters against their string', { d: { 0: 'a' } }, { d: 'a' }, false],
    ['a nested key the client lacks', { d: { a: 1, b: 2 } }, { d: { a: 1 } }, false],
    ['a nested key only the client has', { d: { a: 1 } }, { d: { a: 1, b: 2 } }, false],
    ['a same-sized object with another key', { d: { a: 1 } }, { d: { b: 1 } }, false],
    [
      'a key present as undefined against another key',
      { d: { a: undefined } },
      { d: { b: undefined } },
      false,
    ],
    ['an array against an object with its indices', { d: [1] }, { d: { 0: 1 } }, false],
    ['an object against an array', { d: { 0: 1 } }, { d: [1] }, false],
    ['an array one item longer', { d: [1] }, { d: [1, 2] }, false],
    ['null against an object', { d: null }, { d: {} }, false],
    ['an object against null', { d: {} }, { d: null }, false],
    ['a number against its string', { d: 1 }, { d: '1' }, false],
    ['a string against an object', { d: 'x' }, { d: {} }, false],
    ['an object against a string', { d: {} }, { d: 'x' }, false],
  ])('compares extra values deeply: %s', (_what, server, client, equal) => {
    expect(requirementMatches(requirement({ extra: server }), requirement({ extra: client }))).toBe(equal);
  });
});

describe('findRequirement', () => {
  const usdc = requirement();
  const dearer = requirement({ amount: '2000', payTo: '0x0000000000000000000000000000000000000001' });

  it('finds the requirement the client accepted among several', () => {
    expect(findRequirement([usdc, dearer], requirement({ amount: '2000', payTo: dearer.payTo }))).toEqual({
      requirement: dearer,
    });
  });

  it.each([
    ['scheme', { scheme: 'upto' }, 'payment_scheme_mismatch'],
    ['network', { network: 'eip155:1' }, 'payment_network_mismatch'],
    ['asset', { asset: '0x0000000000000000000000000000000000000002' }, 'payment_asset_mismatch'],
    ['amount', { amount: '1' }, 'payment_amount_mismatch'],
    ['payTo', { payTo: '0x0000000000000000000000000000000000000003' }, 'payment_recipient_mismatch'],
    ['maxTimeoutSeconds', { maxTimeoutSeconds: 5 }, 'payment_requirements_mismatch'],
    ['extra', { extra: {} }, 'payment_requirements_mismatch'],
  ] as const)('names the first field that differs: %s', (_field, overrides, code) => {
    expect(findRequirement([usdc, dearer], requirement(overrides))).toEqual({ code });
  });

  it('narrows field by field: an amount of one option with the recipient of the other is a recipient mismatch', () => {
    expect(findRequirement([usdc, dearer], requirement({ payTo: dearer.payTo }))).toEqual({
      code: 'payment_recipient_mismatch',
    });
  });
});

describe('codeForReason', () => {
  it.each([
    ['invalid_exact_evm_insufficient_balance', 'payment_insufficient_funds'],
    ['INSUFFICIENT_FUNDS', 'payment_insufficient_funds'],
    ['invalid_exact_evm_nonce_already_used', 'payment_already_used'],
    ['authorization_already_used', 'payment_already_used'],
    ['invalid_exact_evm_signature', 'payment_signature_invalid'],
    ['invalid_exact_evm_recipient_mismatch', 'payment_recipient_mismatch'],
    ['invalid_pay_to', 'payment_recipient_mismatch'],
    ['wrong_payto', 'payment_recipient_mismatch'],
    ['invalid_exact_evm_payload_authorization_valid_before', 'payment_expired'],
    ['authorization_expired', 'payment_expired'],
    ['invalid_exact_evm_payload_authorization_valid_after', 'payment_not_yet_valid'],
    ['invalid_exact_evm_payload_authorization_value_mismatch', 'payment_amount_mismatch'],
    ['invalid_amount', 'payment_amount_mismatch'],
    ['invalid_network', 'payment_network_mismatch'],
    ['invalid_scheme', 'payment_scheme_mismatch'],
    ['unsupported_scheme_version', 'payment_scheme_mismatch'],
    ['scheme_unknown', 'payment_verification_failed'],
    ['something_else', 'payment_verification_failed'],
  ] as const)('maps %s to %s', (reason, code) => {
    expect(codeForReason(reason, 'payment_verification_failed')).toBe(code);
  });

  it('keeps the fallback for no reason or an empty one', () => {
    expect(codeForReason(undefined, 'payment_settlement_failed')).toBe('payment_settlement_failed');
    expect(codeForReason('', 'payment_settlement_failed')).toBe('payment_settlement_failed');
  });

  it('checks the families in order: a reason naming two is read as the first', () => {
    expect(codeForReason('insufficient_signature', 'payment_invalid')).toBe('payment_insufficient_funds');
    expect(codeForReason('signature_expired', 'payment_invalid')).toBe('payment_signature_invalid');
    expect(codeForReason('expired_amount', 'payment_invalid')).toBe('payment_expired');
    expect(codeForReason('valid_after_amount', 'payment_invalid')).toBe('payment_not_yet_valid');
    expect(codeForReason('amount_network', 'payment_invalid')).toBe('payment_amount_mismatch');
    expect(codeForReason('network_scheme', 'payment_invalid')).toBe('payment_network_mismatch');
  });
});
