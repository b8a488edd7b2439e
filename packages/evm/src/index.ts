// @tollbooth/evm: the x402 `exact` scheme on EVM networks (EIP-3009 tokens such as USDC).

export { baseSepoliaUsdc, baseUsdc, DEFAULT_ASSETS } from './assets/default-assets';
export {
  type DefineAssetErrorType,
  type DefineAssetParameters,
  type DefineAssetReturnType,
  defineAsset,
  type EvmAsset,
} from './assets/define-asset';
export { type FindAssetParameters, type FindAssetReturnType, findAsset } from './assets/find-asset';
export {
  type CreatePaymentPayloadErrorType,
  type CreatePaymentPayloadParameters,
  type CreatePaymentPayloadReturnType,
  createPaymentPayload,
} from './client/create-payment-payload';
export {
  type SignTransferAuthorizationParameters,
  type SignTransferAuthorizationReturnType,
  signTransferAuthorization,
} from './client/sign-transfer-authorization';
export {
  ERC1271_MAGIC_VALUE,
  EXACT_SCHEME,
  ExactEvmReason,
  eip3009Abi,
  erc1271Abi,
  transferWithAuthorizationTypes,
  VALID_BEFORE_MARGIN_SECONDS,
} from './constants';
export { EvmErrorCode, EvmSchemeError } from './errors';
export {
  type CreateExactEvmFacilitatorErrorType,
  type CreateExactEvmFacilitatorParameters,
  type CreateExactEvmFacilitatorReturnType,
  createExactEvmFacilitator,
  EXACT_EVM_FACILITATOR_DEFAULTS,
  type ExactEvmFacilitatorNetwork,
} from './facilitator/create-exact-evm-facilitator';
export {
  DEFAULT_RECEIPT_TIMEOUT_MS,
  type SettleExactEvmPaymentParameters,
  type SettleExactEvmPaymentReturnType,
  settleExactEvmPayment,
} from './facilitator/settle-exact-evm-payment';
export {
  type VerifyExactEvmPaymentParameters,
  type VerifyExactEvmPaymentReturnType,
  verifyExactEvmPayment,
} from './facilitator/verify-exact-evm-payment';
export {
  ExactEvmAuthorization,
  type ExactEvmAuthorizationData,
  ExactEvmPayload,
  type ExactEvmPayloadData,
  type ParseExactEvmPayloadReturnType,
  parseExactEvmPayload,
} from './payload/exact-evm-payload';
export {
  DEFAULT_EXPIRY_GRACE_BLOCKS,
  DEFAULT_RECONCILE_LOOKBACK_BLOCKS,
  type ReconcileExactEvmPaymentParameters,
  type ReconcileExactEvmPaymentReturnType,
  reconcileExactEvmPayment,
} from './reconcile/reconcile-exact-evm-payment';
export {
  type CreateExactEvmSchemeErrorType,
  type CreateExactEvmSchemeParameters,
  type CreateExactEvmSchemeReturnType,
  createExactEvmScheme,
} from './server/create-exact-evm-scheme';
export {
  type PreVerifyExactEvmPaymentParameters,
  type PreVerifyExactEvmPaymentReturnType,
  preVerifyExactEvmPayment,
} from './server/pre-verify-exact-evm-payment';
export {
  type ResolveExactEvmPriceErrorType,
  type ResolveExactEvmPriceParameters,
  type ResolveExactEvmPriceReturnType,
  resolveExactEvmPrice,
} from './server/resolve-exact-evm-price';
export {
  type FormatSiweMessageParameters,
  type FormatSiweMessageReturnType,
  formatSiweMessage,
} from './sign-in/format-siwe-message';
export {
  type VerifySignInParameters,
  type VerifySignInReturnType,
  verifySignIn,
} from './sign-in/verify-sign-in';
export {
  type HashTransferAuthorizationParameters,
  type HashTransferAuthorizationReturnType,
  hashTransferAuthorization,
  type TransferAuthorization,
  type TransferAuthorizationDomain,
} from './signature/hash-transfer-authorization';
export {
  type RecoverSignerAddressParameters,
  type RecoverSignerAddressReturnType,
  recoverSignerAddress,
} from './signature/recover-signer-address';
export { getDefaultRecoveryBackend, type RecoveryBackend } from './signature/recovery-backends';
export {
  type CheckEvmAddressErrorType,
  type CheckEvmAddressParameters,
  type CheckEvmAddressReturnType,
  checkEvmAddress,
} from './utils/check-evm-address';
export { createAuthorizationNonce } from './utils/create-authorization-nonce';
export { getChainId } from './utils/get-chain-id';
