import {
  type PaymentPayload,
  type PaymentPayloadV1,
  type PaymentRequirements,
  type PaymentRequirementsV1,
  V1_NETWORKS,
} from '@tollbooth/core';
import { type Address, getAddress, type Hex, isAddress } from 'viem';
import { EXACT_SCHEME, ExactEvmReason, VALID_BEFORE_MARGIN_SECONDS } from '../constants';
import { type ExactEvmPayloadData, parseExactEvmPayload } from '../payload/exact-evm-payload';
import { hashTransferAuthorization } from '../signature/hash-transfer-authorization';
import { recoverSignerAddress } from '../signature/recover-signer-address';
import type { RecoveryBackend } from '../signature/recovery-backends';
import { getChainId } from '../utils/get-chain-id';

/** A payment and the server's requirement, v1 or v2, in one shape. */
export interface ExactEvmRequest {
  x402Version: 1 | 2;
  /** Scheme and network the client says it paid with (`accepted` in v2, top level in v1). */
  clientScheme: unknown;
  clientNetwork: unknown;
  scheme: string;
  /** CAIP-2 network of the server's requirement (v1 names mapped). */
  network: string;
  /** Network exactly as the requirement spells it (v1 keeps its name in responses). */
  wireNetwork: string;
  amount: string;
  asset: string;
  payTo: string;
  extra: Record<string, unknown> | undefined;
  rawPayload: unknown;
}

export interface CheckFailure {
  ok: false;
  reason: string;
  message: string;
  payer?: string | undefined;
}

/** A request that passed the scheme, shape, domain and network checks. */
export interface CheckedExactEvmRequest extends ExactEvmRequest {
  payload: ExactEvmPayloadData;
  chainId: number;
  assetAddress: Address;
  name: string;
  version: string;
}

function toCaip2(network: unknown): string | undefined {
  if (typeof network !== 'string') return undefined;
  if (network.includes(':')) return network;
  return V1_NETWORKS[network];
}

/** Puts a v1 or v2 payload and requirement into one shape (no validation beyond reading fields). */
export function toExactEvmRequest(
  payload: PaymentPayload | PaymentPayloadV1,
  requirements: PaymentRequirements | PaymentRequirementsV1,
): ExactEvmRequest {
  const p = payload as Record<string, unknown>;
  const r = requirements as Record<string, unknown>;
  const v1 = p['x402Version'] === 1;
  const accepted = (v1 ? p : (p['accepted'] ?? {})) as Record<string, unknown>;
  const wireNetwork = String(r['network'] ?? '');
  return {
    x402Version: v1 ? 1 : 2,
    clientScheme: accepted['scheme'],
    clientNetwork: accepted['network'],
    scheme: String(r['scheme'] ?? ''),
    network: toCaip2(wireNetwork) ?? wireNetwork,
    wireNetwork,
    amount: String((v1 ? r['maxAmountRequired'] : r['amount']) ?? ''),
    asset: String(r['asset'] ?? ''),
    payTo: String(r['payTo'] ?? ''),
    extra: (r['extra'] ?? undefined) as Record<string, unknown> | undefined,
    rawPayload: p['payload'],
  };
}

const fail = (reason: string, message: string, payer?: string): CheckFailure => ({
  ok: false,
  reason,
  message,
  payer,
});

function payerOf(raw: unknown): string | undefined {
  const from = (raw as { authorization?: { from?: unknown } } | undefined)?.authorization?.from;
  return typeof from === 'string' ? from : undefined;
}

// A server's requirements name a handful of tokens: their checksummed addresses are cached.
const tokenAddresses = new Map<string, Address | null>();
const MAX_TOKEN_ADDRESSES = 256;

/** `getAddress(asset)` when `asset` is an address (any case), else `undefined`. */
function tokenAddressOf(asset: string): Address | undefined {
  let address = tokenAddresses.get(asset);
  if (address === undefined) {
    address = isAddress(asset, { strict: false }) ? getAddress(asset) : null;
    if (tokenAddresses.size >= MAX_TOKEN_ADDRESSES) tokenAddresses.clear();
    tokenAddresses.set(asset, address);
  }
  return address ?? undefined;
}

/** Official order, part 1: scheme, (payload shape), EIP-712 domain present, network. */
export function checkRequest(
  request: ExactEvmRequest,
): CheckFailure | { ok: true; request: CheckedExactEvmRequest } {
  const payer = payerOf(request.rawPayload);
  if (request.clientScheme !== EXACT_SCHEME || request.scheme !== EXACT_SCHEME) {
    return fail(
      ExactEvmReason.scheme,
      `scheme must be "exact" (payment: ${String(request.clientScheme)})`,
      payer,
    );
  }
  const parsed = parseExactEvmPayload(request.rawPayload);
  if (!parsed.ok) return fail(ExactEvmReason.invalidPayload, parsed.message, payer);
  const name = request.extra?.['name'];
  const version = request.extra?.['version'];
  if (typeof name !== 'string' || !name || typeof version !== 'string' || !version) {
    return fail(
      ExactEvmReason.missingEip712Domain,
      'requirement extra must carry the EIP-712 name and version',
      payer,
    );
  }
  const assetAddress = tokenAddressOf(request.asset);
  if (assetAddress === undefined) {
    return fail(ExactEvmReason.missingEip712Domain, `asset "${request.asset}" is not a token address`, payer);
  }
  // The payment's network as CAIP-2 when it has a known name, as written otherwise (a v1 name this
  // package does not know is then reported as such, not as a mismatch with itself).
  const paymentNetwork = toCaip2(request.clientNetwork) ?? String(request.clientNetwork ?? '');
  if (!request.wireNetwork || paymentNetwork !== request.network) {
    return fail(
      ExactEvmReason.networkMismatch,
      request.wireNetwork
        ? `payment network ${String(request.clientNetwork)} does not match ${request.wireNetwork}`
        : `payment network ${String(request.clientNetwork)}, but the requirement names no network`,
      payer,
    );
  }
  const chainId = getChainId(request.network);
  if (chainId === undefined) {
    return fail(
      ExactEvmReason.networkMismatch,
      `network ${request.wireNetwork} is no EVM chain this scheme settles on (eip155:<chain id>)`,
      payer,
    );
  }
  // Fields listed, not spread: this runs once per paid request, and a literal keeps one shape.
  return {
    ok: true,
    request: {
      x402Version: request.x402Version,
      clientScheme: request.clientScheme,
      clientNetwork: request.clientNetwork,
      scheme: request.scheme,
      network: request.network,
      wireNetwork: request.wireNetwork,
      amount: request.amount,
      asset: request.asset,
      payTo: request.payTo,
      extra: request.extra,
      rawPayload: request.rawPayload,
      payload: parsed.payload,
      chainId,
      assetAddress,
      name,
      version,
    },
  };
}

/** The EIP-712 digest of the payment's authorization under the requirement's domain. */
export function digestOf(request: CheckedExactEvmRequest): Hex {
  return hashTransferAuthorization({
    domain: {
      name: request.name,
      version: request.version,
      chainId: request.chainId,
      verifyingContract: request.assetAddress,
    },
    authorization: request.payload.authorization,
  });
}

export type LocalSignatureResult =
  | { kind: 'valid' }
  /** 65 bytes, recovered to someone else (or not recoverable). */
  | { kind: 'mismatch'; recovered: string | undefined }
  /** Not 65 bytes: ERC-1271 or ERC-6492, needs the chain. */
  | { kind: 'contract' };

/** Checks an ECDSA signature locally; longer signatures are left to the chain. */
export function checkLocalSignature(
  request: CheckedExactEvmRequest,
  digest: Hex,
  backend?: RecoveryBackend,
): LocalSignatureResult {
  const { signature, authorization } = request.payload;
  if (signature.length !== 132) return { kind: 'contract' };
  const recovered = recoverSignerAddress({ hash: digest, signature, backend });
  if (recovered !== undefined && recovered === authorization.from.toLowerCase()) return { kind: 'valid' };
  return { kind: 'mismatch', recovered };
}

/** Official order, part 2 (after the signature): recipient, validBefore, validAfter, exact value. */
export function checkTerms(request: CheckedExactEvmRequest, now: number): CheckFailure | undefined {
  const { authorization } = request.payload;
  const payer = authorization.from;
  if (authorization.to.toLowerCase() !== request.payTo.toLowerCase()) {
    return fail(
      ExactEvmReason.recipientMismatch,
      `authorization pays ${authorization.to}, not ${request.payTo}`,
      payer,
    );
  }
  if (BigInt(authorization.validBefore) < BigInt(Math.floor(now)) + BigInt(VALID_BEFORE_MARGIN_SECONDS)) {
    return fail(
      ExactEvmReason.validBefore,
      `authorization expires at ${authorization.validBefore}, less than ${VALID_BEFORE_MARGIN_SECONDS} s from now`,
      payer,
    );
  }
  if (BigInt(authorization.validAfter) > BigInt(Math.floor(now))) {
    return fail(
      ExactEvmReason.validAfter,
      `authorization is not valid before ${authorization.validAfter}`,
      payer,
    );
  }
  if (!/^\d+$/.test(request.amount) || BigInt(authorization.value) !== BigInt(request.amount)) {
    return fail(
      ExactEvmReason.valueMismatch,
      `authorization value ${authorization.value} is not the required ${request.amount}`,
      payer,
    );
  }
  return undefined;
}

/** Ledger identity: network, asset, payer and nonce, lower-cased (never the malleable signature). */
export function identityOf(request: CheckedExactEvmRequest): string {
  const { from, nonce } = request.payload.authorization;
  return `exact:${request.network}:${request.asset}:${from}:${nonce}`.toLowerCase();
}
