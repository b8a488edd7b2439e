import { FacilitatorError, type FacilitatorOperation } from '@tollbooth/core';
import {
  type Account,
  BaseError,
  type Chain,
  type Client,
  type Hex,
  HttpRequestError,
  isAddressEqual,
  parseErc6492Signature,
  parseSignature,
  SocketClosedError,
  TimeoutError,
  type Transport,
  WebSocketRequestError,
  zeroAddress,
} from 'viem';
import { getCode, readContract, simulateContract } from 'viem/actions';
import { ERC1271_MAGIC_VALUE, ExactEvmReason, eip3009Abi, erc1271Abi } from '../constants';
import {
  type CheckedExactEvmRequest,
  type CheckFailure,
  checkLocalSignature,
  digestOf,
} from './exact-evm-request';

export type ChainClient = Client<Transport, Chain | undefined, Account | undefined>;

/** True when an error means "no answer from the node" rather than a definitive answer. */
export function isTransportError(error: unknown): boolean {
  if (!(error instanceof BaseError)) return false;
  return !!error.walk(
    (e) =>
      e instanceof HttpRequestError ||
      e instanceof TimeoutError ||
      e instanceof WebSocketRequestError ||
      e instanceof SocketClosedError,
  );
}

/** Rethrows a transport failure as a FacilitatorError (outcome unknown). */
export function unknownOutcome(operation: FacilitatorOperation, error: unknown): FacilitatorError {
  return new FacilitatorError('network', operation, error instanceof Error ? error.message : String(error), {
    cause: error,
  });
}

/** The signature bytes the token checks (an ERC-6492 wrapper removed) and whether the wallet is counterfactual. */
export async function checkSignatureOnChain(
  client: ChainClient,
  request: CheckedExactEvmRequest,
): Promise<CheckFailure | { ok: true; signature: Hex }> {
  const { authorization } = request.payload;
  const payer = authorization.from;
  let digest: Hex;
  try {
    digest = digestOf(request);
  } catch (error) {
    // A field the payload schema lets through but the EIP-712 encoder refuses (a `from` or `to`
    // with a broken checksum): a refusal, as in preVerify, not a crash of verify or settle.
    return {
      ok: false,
      reason: ExactEvmReason.signature,
      message: `cannot hash the authorization: ${String(error)}`,
      payer,
    };
  }
  const local = checkLocalSignature(request, digest);
  if (local.kind === 'valid') return { ok: true, signature: request.payload.signature };
  let signature = request.payload.signature;
  let counterfactual = false;
  if (local.kind === 'contract') {
    const wrapped = parseErc6492Signature(signature);
    if (wrapped.address && wrapped.data && !isAddressEqual(wrapped.address, zeroAddress)) {
      signature = wrapped.signature;
      counterfactual = true;
    }
  }
  const code = await getCode(client, { address: payer });
  if (!code || code === '0x') {
    if (counterfactual) {
      return {
        ok: false,
        reason: ExactEvmReason.factoryNotAllowed,
        message: 'undeployed ERC-6492 wallets are not supported',
        payer,
      };
    }
    return {
      ok: false,
      reason: ExactEvmReason.signature,
      message: 'signature does not match the payer',
      payer,
    };
  }
  try {
    const result = await readContract(client, {
      address: payer,
      abi: erc1271Abi,
      functionName: 'isValidSignature',
      args: [digest, signature],
    });
    if (result.toLowerCase() === ERC1271_MAGIC_VALUE) return { ok: true, signature };
  } catch (error) {
    if (isTransportError(error)) throw error;
  }
  return {
    ok: false,
    reason: ExactEvmReason.signature,
    message: 'the payer wallet rejects the signature (ERC-1271)',
    payer,
  };
}

/** Contracts known to be deployed, by chain and address (a positive answer does not change). */
const deployed = new Set<string>();

export async function checkAssetDeployed(
  client: ChainClient,
  request: CheckedExactEvmRequest,
): Promise<CheckFailure | undefined> {
  const key = `${request.chainId}:${request.assetAddress.toLowerCase()}`;
  if (deployed.has(key)) return undefined;
  const code = await getCode(client, { address: request.assetAddress });
  if (!code || code === '0x') {
    return {
      ok: false,
      reason: ExactEvmReason.assetNotDeployed,
      message: `no contract at ${request.assetAddress} on ${request.network}`,
      payer: request.payload.authorization.from,
    };
  }
  deployed.add(key);
  return undefined;
}

/** Arguments of `transferWithAuthorization`: `(…, v, r, s)` for 65-byte signatures, `(…, bytes)` otherwise. */
export function transferArgs(request: CheckedExactEvmRequest, signature: Hex) {
  const a = request.payload.authorization;
  const base = [a.from, a.to, BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore), a.nonce] as const;
  if (signature.length === 132) {
    const { r, s, yParity } = parseSignature(signature);
    // Tokens run ecrecover, which wants v = 27/28 whatever form the client sent.
    return [...base, 27 + (yParity ?? 0), r, s] as const;
  }
  return [...base, signature] as const;
}

/** eth_call of the transfer; on failure, the official diagnosis of why. */
export async function simulateTransfer(
  client: ChainClient,
  request: CheckedExactEvmRequest,
  signature: Hex,
): Promise<CheckFailure | undefined> {
  const args = transferArgs(request, signature);
  try {
    await simulateContract(client, {
      address: request.assetAddress,
      abi: eip3009Abi,
      functionName: 'transferWithAuthorization',
      args: args as never,
      account: client.account,
    });
    return undefined;
  } catch (error) {
    if (isTransportError(error)) throw error;
    const diagnosis = await diagnoseTransferFailure(client, request);
    const message = error instanceof BaseError ? error.shortMessage : String(error);
    return { ...diagnosis, message: diagnosis.message || message };
  }
}

/** Why a transfer would fail, read from the token: nonce used, name/version, balance. */
export async function diagnoseTransferFailure(
  client: ChainClient,
  request: CheckedExactEvmRequest,
): Promise<CheckFailure> {
  const { from, nonce } = request.payload.authorization;
  const read = <T>(promise: Promise<T>) =>
    promise.then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => {
        if (isTransportError(error)) throw error;
        return { ok: false as const };
      },
    );
  const address = request.assetAddress;
  const [state, name, version, balance] = await Promise.all([
    read(
      readContract(client, {
        address,
        abi: eip3009Abi,
        functionName: 'authorizationState',
        args: [from, nonce],
      }),
    ),
    read(readContract(client, { address, abi: eip3009Abi, functionName: 'name' })),
    read(readContract(client, { address, abi: eip3009Abi, functionName: 'version' })),
    read(readContract(client, { address, abi: eip3009Abi, functionName: 'balanceOf', args: [from] })),
  ]);
  const failure = (reason: string, message: string): CheckFailure => ({
    ok: false,
    reason,
    message,
    payer: from,
  });
  if (!state.ok) return failure(ExactEvmReason.eip3009NotSupported, `${address} has no authorizationState()`);
  if (state.value)
    return failure(ExactEvmReason.nonceAlreadyUsed, `nonce ${nonce} of ${from} is already used`);
  if (name.ok && name.value !== request.name)
    return failure(ExactEvmReason.tokenNameMismatch, `token name is "${name.value}", not "${request.name}"`);
  if (version.ok && version.value !== request.version)
    return failure(
      ExactEvmReason.tokenVersionMismatch,
      `token version is "${version.value}", not "${request.version}"`,
    );
  if (balance.ok && balance.value < BigInt(request.payload.authorization.value))
    return failure(
      ExactEvmReason.insufficientBalance,
      `balance ${balance.value} is below ${request.payload.authorization.value}`,
    );
  return failure(ExactEvmReason.simulationFailed, '');
}

/** Maps a revert message of `transferWithAuthorization` (Circle's or OpenZeppelin's wording) to a reason. */
export function classifyTransferRevert(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  if (/authorization is expired|AuthorizationExpired|valid before/i.test(text))
    return ExactEvmReason.validBefore;
  if (/authorization is not yet valid|AuthorizationNotYetValid/i.test(text)) return ExactEvmReason.validAfter;
  if (/authorization is used|used or canceled|AuthorizationAlreadyUsed/i.test(text))
    return ExactEvmReason.nonceAlreadyUsed;
  if (/exceeds balance|insufficient balance|ERC20InsufficientBalance/i.test(text))
    return ExactEvmReason.insufficientBalance;
  if (/invalid signature|SignerMismatch|InvalidSignature/i.test(text)) return ExactEvmReason.signature;
  return ExactEvmReason.transactionFailed;
}
