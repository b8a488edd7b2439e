import type { Address, Hex } from 'viem';
import * as z from 'zod';

const MAX_UINT256 = (1n << 256n) - 1n;
const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 20-byte 0x-hex address');
const uint256 = z
  .string()
  .regex(/^\d{1,78}$/, 'must be a decimal string')
  .refine((value) => BigInt(value) <= MAX_UINT256, 'must fit in uint256');

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

/**
 * Checks the shape of an exact EVM `payload` (signature and authorization fields).
 *
 * @example parseExactEvmPayload(paymentPayload.payload)
 */
export function parseExactEvmPayload(payload: unknown): ParseExactEvmPayloadReturnType {
  const result = ExactEvmPayload.safeParse(payload);
  if (!result.success) {
    const issue = result.error.issues[0];
    return { ok: false, message: `payload.${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}` };
  }
  return { ok: true, payload: result.data as unknown as ExactEvmPayloadData };
}
