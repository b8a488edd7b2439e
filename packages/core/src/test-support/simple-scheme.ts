// Test support: a small `exact` scheme server with structural checks only (no cryptography), so
// core tests can exercise the gate without a chain. The real EIP-3009 scheme lives in
// @tollbooth/evm and is wired in by the cross-package interop tests.
import { randomBytes } from 'node:crypto';
import { TollboothError } from '../errors/tollbooth-error';
import { toAtomicAmount } from '../protocol/money';
import type { PaymentPayload, PaymentRequirements } from '../protocol/schemas';
import type {
  AssetAmount,
  PreVerifyResult,
  Price,
  ReconcileInput,
  ReconcileResult,
  SchemeServer,
} from '../scheme';

export const TEST_ASSET = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
export const TEST_PAY_TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';
export const TEST_PAYER = '0x857b06519E91e3A54538791bDbb0E22373e36b66';

export interface SimpleScheme extends SchemeServer {
  /** What `reconcile` answers next; default `unknown`. */
  reconcileAnswer: ReconcileResult | ((input: ReconcileInput) => ReconcileResult);
  reconcileCalls: number;
}

/** An `exact` scheme on `eip155:*` whose payload is `{signature, authorization}` checked structurally. */
export function createSimpleScheme(): SimpleScheme {
  const scheme: SimpleScheme = {
    scheme: 'exact',
    reconcileAnswer: { status: 'unknown', message: 'no answer scripted' },
    reconcileCalls: 0,
    supportsNetwork: (network) => network.startsWith('eip155:'),
    checkAddress: (address) =>
      /^0x[0-9a-fA-F]{40}$/.test(address) ? undefined : `is ${JSON.stringify(address)}, not an address`,
    resolvePrice(price: Price): AssetAmount {
      if (typeof price === 'object') return price;
      if (typeof price === 'string' && !price.startsWith('$') && !/^[\d.]+$/.test(price)) {
        throw new TollboothError('invalid_amount', `unsupported price ${price}`);
      }
      return {
        amount: toAtomicAmount(price, 6),
        asset: TEST_ASSET,
        extra: { name: 'USD Coin', version: '2' },
      };
    },
    preVerify(payload: PaymentPayload, requirements: PaymentRequirements, now: number): PreVerifyResult {
      const auth = (payload.payload as { authorization?: Record<string, unknown> }).authorization;
      const signature = (payload.payload as { signature?: unknown }).signature;
      const fail = (reason: string, message: string): PreVerifyResult => ({ ok: false, reason, message });
      if (!auth || typeof signature !== 'string')
        return fail('invalid_exact_evm_payload', 'missing authorization');
      const { from, to, value, validAfter, validBefore, nonce } = auth as Record<string, string>;
      if (![from, to, value, validAfter, validBefore, nonce].every((v) => typeof v === 'string')) {
        return fail('invalid_exact_evm_payload', 'authorization fields must be strings');
      }
      if (signature === '0xbad') return fail('invalid_exact_evm_signature', 'signature does not recover');
      if (to !== requirements.payTo) return fail('invalid_exact_evm_recipient_mismatch', 'wrong recipient');
      const identity = `${requirements.network}:${requirements.asset.toLowerCase()}:${(from as string).toLowerCase()}:${(nonce as string).toLowerCase()}`;
      if (Number(validBefore) < now + 6) {
        return {
          ...(fail(
            'invalid_exact_evm_payload_authorization_valid_before',
            'authorization expired',
          ) as object),
          known: { identity, payer: from as string, validBefore: Number(validBefore) },
        } as PreVerifyResult;
      }
      if (Number(validAfter) > now) {
        return fail('invalid_exact_evm_payload_authorization_valid_after', 'authorization not valid yet');
      }
      if (value !== requirements.amount) {
        return fail('invalid_exact_evm_payload_authorization_value_mismatch', 'value differs from amount');
      }
      return {
        ok: true,
        payer: from as string,
        identity,
        validBefore: Number(validBefore),
        // `0xc0…` stands for a contract (smart-wallet) signature that only the chain can check.
        authenticated: !signature.startsWith('0xc0'),
      };
    },
    async reconcile(input) {
      scheme.reconcileCalls++;
      const answer = scheme.reconcileAnswer;
      return typeof answer === 'function' ? answer(input) : answer;
    },
  };
  return scheme;
}

/**
 * The simple scheme with a chain that shows every authorization unused and valid: a settlement
 * the facilitator refuses for a reason that rules out sending is then refused (the chain judges
 * every refusal it can see).
 */
export function createQuietChainScheme(): SimpleScheme {
  const scheme = createSimpleScheme();
  scheme.reconcileAnswer = { status: 'unsettled' };
  return scheme;
}

/** Builds a v2 payment payload for requirements; `overrides` patch the authorization. */
export function buildPayment(
  requirements: PaymentRequirements,
  options: {
    resource?: string;
    authorization?: Record<string, string>;
    accepted?: Partial<PaymentRequirements>;
    signature?: string;
    now?: number;
  } = {},
): PaymentPayload {
  const now = options.now ?? Math.floor(Date.now() / 1000);
  return {
    x402Version: 2,
    resource: { url: options.resource ?? 'http://localhost/' },
    accepted: { ...requirements, ...options.accepted },
    payload: {
      signature: options.signature ?? `0x${'ab'.repeat(65)}`,
      authorization: {
        from: TEST_PAYER,
        to: requirements.payTo,
        value: requirements.amount,
        validAfter: '0',
        validBefore: String(now + requirements.maxTimeoutSeconds),
        nonce: `0x${randomBytes(32).toString('hex')}`,
        ...options.authorization,
      },
    },
  };
}
