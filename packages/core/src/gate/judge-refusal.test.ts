// Which settle refusals say nothing was sent (judge-refusal.ts): the chain then decides whether the
// refusal stands; any other refusal the chain shows nothing for stays uncertain.
import { describe, expect, it } from 'vitest';
import { createSimpleScheme } from '../test-support/simple-scheme';
import { canAskChain, refusedBeforeSending } from './judge-refusal';

describe('refusedBeforeSending', () => {
  it.each([
    'invalid_exact_evm_insufficient_balance',
    'invalid_exact_evm_signature',
    'invalid_exact_evm_recipient_mismatch',
    'invalid_exact_evm_payload_authorization_valid_before',
    'invalid_exact_evm_payload_authorization_valid_after',
    'invalid_exact_evm_payload_authorization_value_mismatch',
    'invalid_exact_evm_network_mismatch',
    'invalid_exact_evm_scheme',
  ])('counts %s as a refusal of the payment itself, before anything was sent', (reason) => {
    expect(refusedBeforeSending(reason)).toBe(true);
  });

  it.each([
    'unexpected_settle_error',
    'invalid_exact_evm_transaction_failed',
    'invalid_exact_evm_transfer_event_mismatch',
    'invalid_exact_evm_nonce_already_used',
    'settlement_failed',
    'something_new',
    undefined,
  ])('does not count %s: a transaction may have been sent', (reason) => {
    expect(refusedBeforeSending(reason)).toBe(false);
  });
});

describe('canAskChain', () => {
  const v2Requirement = { network: 'eip155:8453' } as never;

  it('asks a scheme with a chain reader for the network, or one that does not say', () => {
    const scheme = createSimpleScheme();
    expect(canAskChain({ scheme, v2Requirement })).toBe(true);
    scheme.hasChainReader = (network) => network === 'eip155:8453';
    expect(canAskChain({ scheme, v2Requirement })).toBe(true);
  });

  it('does not ask a scheme without a reader for the network, nor one without reconcile', () => {
    const elsewhere = createSimpleScheme();
    elsewhere.hasChainReader = () => false;
    expect(canAskChain({ scheme: elsewhere, v2Requirement })).toBe(false);
    const none = createSimpleScheme();
    delete none.reconcile;
    expect(canAskChain({ scheme: none, v2Requirement })).toBe(false);
  });
});
