import { BaseError } from 'viem';
import { isTransportError } from '../checks/chain-checks';

/**
 * What a failed `eth_sendRawTransaction` means for the transaction it carried:
 * - `known`: the node already has these bytes (accepted earlier, or mined);
 * - `unanswered`: no answer from the node (transport failure): the bytes may or may not be there;
 * - `nonce`: the nonce is taken or out of order (another sender on the account, or these very
 *   bytes already mined);
 * - `fee`: the fees are below what the node takes now;
 * - `refused`: any other refusal (no gas money, intrinsic gas, a malformed transaction).
 */
export type BroadcastErrorKind = 'known' | 'unanswered' | 'nonce' | 'fee' | 'refused';

const KNOWN = /already known|already imported|known transaction|AlreadyKnown/i;
const NONCE_CONFLICT =
  /nonce too low|nonce too high|nonce has already been used|replacement transaction underpriced|nonce gap|NonceTooLow|OldNonce|invalid nonce/i;
const FEE_TOO_LOW =
  /fee cap less than block base fee|max fee per gas less than block base fee|maxFeePerGas.*(?:less|lower) than|transaction underpriced|FeeCapTooLow|gas price too low/i;

function messageOf(error: unknown): string {
  if (error instanceof BaseError) return `${error.shortMessage} ${error.details ?? ''} ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

/**
 * Classifies a broadcast error from its message (the wordings nodes use)
 * and its type (viem's transport errors). Pure: no I/O, no state. A message that
 * says the node has the bytes wins over everything else, then a missing answer, then a nonce
 * conflict, then a fee too low.
 */
export function classifyBroadcastError(error: unknown): BroadcastErrorKind {
  const text = messageOf(error);
  if (KNOWN.test(text)) return 'known';
  if (isTransportError(error)) return 'unanswered';
  if (NONCE_CONFLICT.test(text)) return 'nonce';
  if (FEE_TOO_LOW.test(text)) return 'fee';
  return 'refused';
}
