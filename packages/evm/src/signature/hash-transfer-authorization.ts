import {
  type Address,
  bytesToHex,
  domainSeparator,
  encodeAbiParameters,
  type Hex,
  hexToBytes,
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

/**
 * The EIP-712 digest a payer signs for `TransferWithAuthorization`. Same result as viem's
 * `hashTypedData`, about four times faster on the paid path: the domain separator is cached and the
 * struct is ABI-encoded directly.
 *
 * @throws when a field is out of range (e.g. a negative value or a malformed address).
 * @example
 * const digest = hashTransferAuthorization({ domain, authorization });
 */
export function hashTransferAuthorization(
  parameters: HashTransferAuthorizationParameters,
): HashTransferAuthorizationReturnType {
  const { domain, authorization: a } = parameters;
  const structHash = keccak256Bytes(
    hexToBytes(
      encodeAbiParameters(STRUCT, [
        TYPE_HASH,
        a.from,
        a.to,
        BigInt(a.value),
        BigInt(a.validAfter),
        BigInt(a.validBefore),
        a.nonce,
      ]),
    ),
  );
  const message = new Uint8Array(66);
  message[0] = 0x19;
  message[1] = 0x01;
  message.set(separatorOf(domain), 2);
  message.set(structHash, 34);
  return bytesToHex(keccak256Bytes(message));
}
