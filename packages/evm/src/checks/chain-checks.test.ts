import { FacilitatorError } from '@tollbooth/core';
import {
  BaseError,
  ContractFunctionExecutionError,
  ContractFunctionRevertedError,
  HttpRequestError,
  SocketClosedError,
  TimeoutError,
  WebSocketRequestError,
  zeroAddress,
} from 'viem';
import { describe, expect, it } from 'vitest';
import { ExactEvmReason, eip3009Abi } from '../constants';
import { classifyTransferRevert, isTransportError, unknownOutcome } from './chain-checks';

const url = 'http://127.0.0.1:8545';
/** How viem's readContract wraps whatever went wrong underneath. */
const inContractCall = (cause: BaseError) =>
  new ContractFunctionExecutionError(cause, {
    abi: eip3009Abi,
    functionName: 'name',
    contractAddress: zeroAddress,
  });

describe('isTransportError', () => {
  it.each<[string, unknown]>([
    ['an HTTP request that failed', new HttpRequestError({ url, details: 'fetch failed' })],
    ['a request that timed out', new TimeoutError({ body: { method: 'eth_call' }, url })],
    ['a WebSocket request that failed', new WebSocketRequestError({ url, details: 'socket error' })],
    ['a WebSocket that closed', new SocketClosedError({ url })],
    ['an HTTP failure inside a contract call error', inContractCall(new HttpRequestError({ url }))],
    ['a timeout inside a contract call error', inContractCall(new TimeoutError({ body: {}, url }))],
  ])('counts %s as no answer from the node', (_label, error) => {
    expect(isTransportError(error)).toBe(true);
  });

  it.each<[string, unknown]>([
    ['a revert', new ContractFunctionRevertedError({ abi: eip3009Abi, functionName: 'name' })],
    ['a revert inside a contract call error', inContractCall(new BaseError('execution reverted'))],
    ['a plain Error that reads like a transport failure', new Error('HTTP request failed: socket hang up')],
    ['a string', 'HTTP request failed'],
    ['undefined', undefined],
  ])('counts %s as an answer', (_label, error) => {
    expect(isTransportError(error)).toBe(false);
  });
});

describe('unknownOutcome', () => {
  it('turns a failure into a network FacilitatorError of the operation, with the failure as cause', () => {
    const cause = new HttpRequestError({ url, details: 'fetch failed' });
    const error = unknownOutcome('settle', cause);
    expect(error).toBeInstanceOf(FacilitatorError);
    expect(error).toMatchObject({
      kind: 'network',
      operation: 'settle',
      message: `settle: ${cause.message}`,
    });
    expect(error.cause).toBe(cause);
  });

  it('names a thrown value that is no Error by its string form', () => {
    const error = unknownOutcome('verify', 'socket closed');
    expect(error).toMatchObject({ kind: 'network', operation: 'verify', message: 'verify: socket closed' });
    expect(error.cause).toBe('socket closed');
  });
});

describe('classifyTransferRevert', () => {
  it.each([
    ['FiatTokenV2: authorization is expired', ExactEvmReason.validBefore],
    ['AuthorizationExpired(1700000000)', ExactEvmReason.validBefore],
    ['the authorization is only good until its valid before time', ExactEvmReason.validBefore],
    ['FiatTokenV2: authorization is not yet valid', ExactEvmReason.validAfter],
    ['AuthorizationNotYetValid(1700000000)', ExactEvmReason.validAfter],
    ['FiatTokenV2: authorization is used or canceled', ExactEvmReason.nonceAlreadyUsed],
    ['FiatTokenV2: authorization is used', ExactEvmReason.nonceAlreadyUsed],
    ['AuthorizationAlreadyUsed(0xabc, 0x01)', ExactEvmReason.nonceAlreadyUsed],
    ['ERC20: transfer amount exceeds balance', ExactEvmReason.insufficientBalance],
    ['insufficient balance for transfer', ExactEvmReason.insufficientBalance],
    ['ERC20InsufficientBalance(0xabc, 0, 10000)', ExactEvmReason.insufficientBalance],
    ['FiatTokenV2: invalid signature', ExactEvmReason.signature],
    ['SignerMismatch()', ExactEvmReason.signature],
    ['InvalidSignature()', ExactEvmReason.signature],
    ['insufficient funds for gas * price + value', ExactEvmReason.transactionFailed],
    ['execution reverted', ExactEvmReason.transactionFailed],
  ])('maps the revert "%s" to %s', (text, reason) => {
    expect(classifyTransferRevert(new Error(`The contract function reverted: ${text}`))).toBe(reason);
  });

  it('reads a thrown value that is no Error by its string form', () => {
    expect(classifyTransferRevert('FiatTokenV2: authorization is expired')).toBe(ExactEvmReason.validBefore);
  });
});
