// @tollbooth/fetch: a paying fetch wrapper for x402 APIs.
export { type CreateEvmPaymentSignerParameters, createEvmPaymentSigner } from './evm-signer';
export {
  createPayingClient,
  DEFAULTS,
  type PaidResponse,
  type PayCallOptions,
  type PayingClient,
  type PayingClientOptions,
  PaymentClientError,
  type PaymentClientErrorCode,
  type PaymentSigner,
  readChallenge,
  readReceipt,
} from './paying-fetch';
export { generatePaymentIdentifier, isPaymentIdentifier } from './payment-identifier';
export { encodeSignInProof, PaidRoutes, type SignInOffer, signInOfferOf } from './sign-in';
export { SpendLedger, type SpendLimits } from './spend-limits';
