import type { Address, Hex } from 'viem';
import * as z from 'zod';

const MAX_UINT256 = (1n << 256n) - 1n;
const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 20-byte 0x-hex address');
const uint256 = z
  .string()
  .regex(/^\d{1,78}$/, 'must be a decimal string')
  // zod runs the refinement even when the regex failed: BigInt must only see digits.
  .refine((value) => !/^\d{1,78}$/.test(value) || BigInt(value) <= MAX_UINT256, 'must fit in uint256');

/** The `authorization` of an exact EVM payload: an EIP-3009 `TransferWithAuthorization`. */
export const ExactEvmAuthorization = z.looseObject({
  from: address,
  to: address,
  value: uint256,
  validAfter: uint256,
  validBefore: uint256,
  nonce: z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'must be 32 bytes of 0x-hex'),
});

/** `payload` of a PaymentPayload for scheme `exact` on `eip155:*` (EIP-3009). */
export const ExactEvmPayload = z.looseObject({
  signature: z.string().regex(/^0x(?:[0-9a-fA-F]{2})+$/, 'must be 0x-hex bytes'),
  authorization: ExactEvmAuthorization,
});

export interface ExactEvmAuthorizationData {
  from: Address;
  to: Address;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: Hex;
}
export interface ExactEvmPayloadData {
  signature: Hex;
  authorization: ExactEvmAuthorizationData;
}

export type ParseExactEvmPayloadReturnType =
  | { ok: true; payload: ExactEvmPayloadData }
  | { ok: false; message: string };

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const UINT = /^\d{1,78}$/;
const NONCE = /^0x[0-9a-fA-F]{64}$/;
const SIGNATURE = /^0x(?:[0-9a-fA-F]{2})+$/;

const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

/** Whether `keys` are exactly `expected`, in any order. */
function hasExactly(value: Record<string, unknown>, expected: readonly string[]): boolean {
  const keys = Object.keys(value);
  return keys.length === expected.length && expected.every((key) => Object.hasOwn(value, key));
}

const isUint256 = (value: unknown): boolean =>
  typeof value === 'string' && UINT.test(value) && (value.length < 78 || BigInt(value) <= MAX_UINT256);

const AUTHORIZATION_KEYS = ['from', 'to', 'value', 'validAfter', 'validBefore', 'nonce'] as const;
const PAYLOAD_KEYS = ['signature', 'authorization'] as const;

/**
 * The common case without zod: a plain payload with exactly the schema's keys, every field valid.
 * Returns what `ExactEvmPayload.safeParse` returns for it (fresh objects, keys in schema order), or
 * `undefined` for anything else, which then takes the schema (the definition of validity, and the
 * source of the error message).
 */
export function parseExactEvmPayloadFast(payload: unknown): ExactEvmPayloadData | undefined {
  if (!isPlainObject(payload) || !hasExactly(payload, PAYLOAD_KEYS)) return undefined;
  const { signature, authorization: a } = payload;
  if (typeof signature !== 'string' || !SIGNATURE.test(signature)) return undefined;
  if (!isPlainObject(a) || !hasExactly(a, AUTHORIZATION_KEYS)) return undefined;
  const { from, to, value, validAfter, validBefore, nonce } = a;
  if (typeof from !== 'string' || !ADDRESS.test(from) || typeof to !== 'string' || !ADDRESS.test(to)) {
    return undefined;
  }
  if (!isUint256(value) || !isUint256(validAfter) || !isUint256(validBefore)) return undefined;
  if (typeof nonce !== 'string' || !NONCE.test(nonce)) return undefined;
  return {
    signature: signature as Hex,
    authorization: {
      from: from as Address,
      to: to as Address,
      value: value as string,
      validAfter: validAfter as string,
      validBefore: validBefore as string,
      nonce: nonce as Hex,
    },
  };
}

/**
 * Checks the shape of an exact EVM `payload` (signature and authorization fields).
 *
 * @example parseExactEvmPayload(paymentPayload.payload)
 */
export function parseExactEvmPayload(payload: unknown): ParseExactEvmPayloadReturnType {
  const fast = parseExactEvmPayloadFast(payload);
  if (fast) return { ok: true, payload: fast };
  const result = ExactEvmPayload.safeParse(payload);
  if (!result.success) {
    const issue = result.error.issues[0];
    return { ok: false, message: `payload.${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}` };
  }
  return { ok: true, payload: result.data as unknown as ExactEvmPayloadData };
}
