import {
  type Address,
  domainSeparator,
  encodeAbiParameters,
  type Hex,
  hexToBytes,
  isAddress,
  keccak256,
  toBytes,
} from 'viem';
import { keccak256Bytes } from './keccak';

/** The EIP-712 domain of an EIP-3009 token. */
export interface TransferAuthorizationDomain {
  name: string;
  version: string;
  chainId: number;
  verifyingContract: Address;
}

/** An EIP-3009 authorization with its fields as the wire carries them (decimal strings). */
export interface TransferAuthorization {
  from: Address;
  to: Address;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: Hex;
}

export interface HashTransferAuthorizationParameters {
  domain: TransferAuthorizationDomain;
  authorization: TransferAuthorization;
}
export type HashTransferAuthorizationReturnType = Hex;

const TYPE_HASH = keccak256(
  toBytes(
    'TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)',
  ),
);
const STRUCT = [
  { type: 'bytes32' },
  { type: 'address' },
  { type: 'address' },
  { type: 'uint256' },
  { type: 'uint256' },
  { type: 'uint256' },
  { type: 'bytes32' },
] as const;

// A server sees a handful of domains; the separator is the same for every payment to them.
const separators = new Map<string, Uint8Array>();
const MAX_SEPARATORS = 256;

function separatorOf(domain: TransferAuthorizationDomain): Uint8Array {
  const key = `${domain.chainId}\0${domain.verifyingContract.toLowerCase()}\0${domain.name}\0${domain.version}`;
  let separator = separators.get(key);
  if (!separator) {
    separator = hexToBytes(domainSeparator({ domain }));
    if (separators.size >= MAX_SEPARATORS) separators.clear();
    separators.set(key, separator);
  }
  return separator;
}

const TYPE_HASH_HEX = TYPE_HASH.slice(2);
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const NONCE = /^0x[0-9a-fA-F]{64}$/;
const UINT = /^\d{1,78}$/;
const MAX_UINT256 = (1n << 256n) - 1n;
const WORD_PAD = '000000000000000000000000';

/** viem's strict address check (checksum when mixed-case), without its cache for plain lower case. */
function isPlainAddress(value: string): boolean {
  return ADDRESS.test(value) && (value === value.toLowerCase() || isAddress(value));
}

/** A uint256 decimal string as 64 hex digits, or `undefined` when it is not one. */
function uintWord(value: string): string | undefined {
  if (typeof value !== 'string' || !UINT.test(value)) return undefined;
  const n = BigInt(value);
  return n > MAX_UINT256 ? undefined : n.toString(16).padStart(64, '0');
}

/**
 * The 224-byte ABI encoding of the struct (type hash, from, to, value, validAfter, validBefore,
 * nonce), built directly from the hex of each word; `undefined` for anything outside the plain
 * domain (valid strict addresses, decimal uint256 strings, a 32-byte hex nonce), which then takes
 * viem's encoder so that odd inputs give exactly its result or its error.
 */
function encodeStructFast(a: TransferAuthorization): Buffer | undefined {
  if (typeof a.from !== 'string' || typeof a.to !== 'string' || typeof a.nonce !== 'string') return undefined;
  if (!NONCE.test(a.nonce) || !isPlainAddress(a.from) || !isPlainAddress(a.to)) return undefined;
  const value = uintWord(a.value);
  const validAfter = uintWord(a.validAfter);
  const validBefore = uintWord(a.validBefore);
  if (value === undefined || validAfter === undefined || validBefore === undefined) return undefined;
  return Buffer.from(
    TYPE_HASH_HEX +
      WORD_PAD +
      a.from.slice(2) +
      WORD_PAD +
      a.to.slice(2) +
      value +
      validAfter +
      validBefore +
      a.nonce.slice(2),
    'hex',
  );
}

/** viem's ABI encoder: the reference, and the path for anything `encodeStructFast` leaves. */
function encodeStructViem(a: TransferAuthorization): Uint8Array {
  return hexToBytes(
    encodeAbiParameters(STRUCT, [
      TYPE_HASH,
      a.from,
      a.to,
      BigInt(a.value),
      BigInt(a.validAfter),
      BigInt(a.validBefore),
      a.nonce,
    ]),
  );
}

/**
 * The EIP-712 digest a payer signs for `TransferWithAuthorization`. Same result as viem's
 * `hashTypedData`, several times faster on the paid path: the domain separator is cached and the
 * struct is ABI-encoded directly (viem's encoder only for inputs outside the plain domain, so they
 * give its result or its error).
 *
 * @throws when a field is out of range (e.g. a negative value or a malformed address).
 * @example
 * const digest = hashTransferAuthorization({ domain, authorization });
 */
export function hashTransferAuthorization(
  parameters: HashTransferAuthorizationParameters,
): HashTransferAuthorizationReturnType {
  const { domain, authorization: a } = parameters;
  const structHash = keccak256Bytes(encodeStructFast(a) ?? encodeStructViem(a));
  const message = Buffer.allocUnsafe(66);
  message[0] = 0x19;
  message[1] = 0x01;
  message.set(separatorOf(domain), 2);
  message.set(structHash, 34);
  return `0x${keccak256Bytes(message).toString('hex')}` as Hex;
}
