/**
 * Wire constants of the `exact` scheme on EVM networks (EIP-3009). The reason strings are the
 * ones the official x402 facilitator sends, spelled exactly as it spells them.
 */

/** The scheme name on the wire. */
export const EXACT_SCHEME = 'exact';

/** Official reason strings of the exact EVM scheme (verify `invalidReason` / settle `errorReason`). */
export const ExactEvmReason = {
  invalidPayload: 'invalid_payload',
  scheme: 'invalid_exact_evm_scheme',
  missingEip712Domain: 'invalid_exact_evm_missing_eip712_domain',
  networkMismatch: 'invalid_exact_evm_network_mismatch',
  signature: 'invalid_exact_evm_signature',
  recipientMismatch: 'invalid_exact_evm_recipient_mismatch',
  validBefore: 'invalid_exact_evm_payload_authorization_valid_before',
  validAfter: 'invalid_exact_evm_payload_authorization_valid_after',
  valueMismatch: 'invalid_exact_evm_payload_authorization_value_mismatch',
  assetNotDeployed: 'asset_not_deployed_contract',
  nonceAlreadyUsed: 'invalid_exact_evm_nonce_already_used',
  insufficientBalance: 'invalid_exact_evm_insufficient_balance',
  tokenNameMismatch: 'invalid_exact_evm_token_name_mismatch',
  tokenVersionMismatch: 'invalid_exact_evm_token_version_mismatch',
  eip3009NotSupported: 'invalid_exact_evm_eip3009_not_supported',
  simulationFailed: 'invalid_exact_evm_transaction_simulation_failed',
  transactionFailed: 'invalid_exact_evm_transaction_failed',
  transferEventMismatch: 'invalid_exact_evm_transfer_event_mismatch',
  factoryNotAllowed: 'eip6492_factory_not_allowed',
  settlementPending: 'settlement_pending',
} as const;
export type ExactEvmReason = (typeof ExactEvmReason)[keyof typeof ExactEvmReason];

/**
 * Seconds of validity an authorization must still have when it is checked, so that it can
 * still be mined (the official facilitator uses the same margin).
 */
export const VALID_BEFORE_MARGIN_SECONDS = 6;

/** EIP-712 types of an EIP-3009 `TransferWithAuthorization`. */
export const transferWithAuthorizationTypes = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

/** The part of an EIP-3009 token's ABI the scheme uses. */
export const eip3009Abi = [
  {
    type: 'function',
    name: 'transferWithAuthorization',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'from', type: 'address' },
      { name: 'to', type: 'address' },
      { name: 'value', type: 'uint256' },
      { name: 'validAfter', type: 'uint256' },
      { name: 'validBefore', type: 'uint256' },
      { name: 'nonce', type: 'bytes32' },
      { name: 'v', type: 'uint8' },
      { name: 'r', type: 'bytes32' },
      { name: 's', type: 'bytes32' },
    ],
    outputs: [],
  },
  {
    type: 'function',
    name: 'transferWithAuthorization',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'from', type: 'address' },
      { name: 'to', type: 'address' },
      { name: 'value', type: 'uint256' },
      { name: 'validAfter', type: 'uint256' },
      { name: 'validBefore', type: 'uint256' },
      { name: 'nonce', type: 'bytes32' },
      { name: 'signature', type: 'bytes' },
    ],
    outputs: [],
  },
  {
    type: 'function',
    name: 'authorizationState',
    stateMutability: 'view',
    inputs: [
      { name: 'authorizer', type: 'address' },
      { name: 'nonce', type: 'bytes32' },
    ],
    outputs: [{ name: '', type: 'bool' }],
  },
  {
    type: 'function',
    name: 'balanceOf',
    stateMutability: 'view',
    inputs: [{ name: 'account', type: 'address' }],
    outputs: [{ name: '', type: 'uint256' }],
  },
  {
    type: 'function',
    name: 'name',
    stateMutability: 'view',
    inputs: [],
    outputs: [{ name: '', type: 'string' }],
  },
  {
    type: 'function',
    name: 'version',
    stateMutability: 'view',
    inputs: [],
    outputs: [{ name: '', type: 'string' }],
  },
  {
    type: 'event',
    name: 'AuthorizationUsed',
    anonymous: false,
    inputs: [
      { name: 'authorizer', type: 'address', indexed: true },
      { name: 'nonce', type: 'bytes32', indexed: true },
    ],
  },
  {
    type: 'event',
    name: 'Transfer',
    anonymous: false,
    inputs: [
      { name: 'from', type: 'address', indexed: true },
      { name: 'to', type: 'address', indexed: true },
      { name: 'value', type: 'uint256', indexed: false },
    ],
  },
] as const;

/** ERC-1271 `isValidSignature`, for payers that are smart-contract wallets. */
export const erc1271Abi = [
  {
    type: 'function',
    name: 'isValidSignature',
    stateMutability: 'view',
    inputs: [
      { name: 'hash', type: 'bytes32' },
      { name: 'signature', type: 'bytes' },
    ],
    outputs: [{ name: '', type: 'bytes4' }],
  },
] as const;

/** The value `isValidSignature` returns for a valid signature. */
export const ERC1271_MAGIC_VALUE = '0x1626ba7e';
