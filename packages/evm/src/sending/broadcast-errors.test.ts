import {
  HttpRequestError,
  InternalRpcError,
  RpcRequestError,
  SocketClosedError,
  TimeoutError,
  TransactionRejectedRpcError,
  WebSocketRequestError,
} from 'viem';
import { describe, expect, it } from 'vitest';
import { type BroadcastErrorKind, classifyBroadcastError } from './broadcast-errors';

const url = 'http://127.0.0.1:8545';

/** The node's JSON-RPC error as viem's HTTP transport hands it to `sendRawTransaction`. */
function rpcError(message: string, code = -32000): Error {
  return new InternalRpcError(new RpcRequestError({ body: {}, error: { code, message }, url }));
}

const table: [string, unknown, BroadcastErrorKind][] = [
  ['geth: already known', rpcError('already known'), 'known'],
  ['nethermind: AlreadyKnown', rpcError('AlreadyKnown'), 'known'],
  [
    'parity: transaction already imported',
    rpcError('Transaction with the same hash was already imported.'),
    'known',
  ],
  ['besu: known transaction', rpcError('known transaction: 0xabc'), 'known'],
  ['a plain Error saying already known', new Error('already known'), 'known'],
  // The node has the bytes whatever the transport says about the rest of the answer.
  [
    'an HTTP failure whose body says already known',
    new HttpRequestError({ url, details: 'already known' }),
    'known',
  ],
  ['HTTP failure', new HttpRequestError({ url, details: 'socket hang up' }), 'unanswered'],
  ['timeout', new TimeoutError({ body: {}, url }), 'unanswered'],
  ['web socket request failure', new WebSocketRequestError({ body: {}, url }), 'unanswered'],
  ['socket closed', new SocketClosedError({ url }), 'unanswered'],
  ['geth: nonce too low', rpcError('nonce too low'), 'nonce'],
  ['nonce too high', rpcError('nonce too high: next nonce 4, tx nonce 9'), 'nonce'],
  ['nonce has already been used', rpcError('nonce has already been used'), 'nonce'],
  // "transaction underpriced" is inside it too: the nonce conflict wins.
  ['replacement transaction underpriced', rpcError('replacement transaction underpriced'), 'nonce'],
  ['nonce gap', rpcError('nonce gap too large'), 'nonce'],
  ['reth: NonceTooLow', rpcError('NonceTooLow'), 'nonce'],
  ['nethermind: OldNonce', rpcError('OldNonce'), 'nonce'],
  ['invalid nonce', rpcError('Invalid nonce'), 'nonce'],
  [
    'geth: fee cap below base fee',
    rpcError('max fee per gas less than block base fee: maxFeePerGas: 1'),
    'fee',
  ],
  ['fee cap less than block base fee', rpcError('fee cap less than block base fee'), 'fee'],
  ['maxFeePerGas lower than base fee', rpcError('maxFeePerGas (1) is lower than the base fee (7)'), 'fee'],
  ['transaction underpriced', rpcError('transaction underpriced'), 'fee'],
  ['reth: FeeCapTooLow', rpcError('FeeCapTooLow'), 'fee'],
  ['gas price too low', rpcError('gas price too low'), 'fee'],
  ['no gas money', rpcError('insufficient funds for gas * price + value'), 'refused'],
  ['intrinsic gas too low', rpcError('intrinsic gas too low'), 'refused'],
  ['rejected by the node', new TransactionRejectedRpcError(new Error('rejected')), 'refused'],
  ['a thrown string', 'execution reverted', 'refused'],
  ['undefined', undefined, 'refused'],
];

describe('classifyBroadcastError', () => {
  it.each(table)('%s', (_, error, kind) => {
    expect(classifyBroadcastError(error)).toBe(kind);
  });
});
