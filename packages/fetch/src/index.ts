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
  type PaymentSigner,
  readChallenge,
  readReceipt,
} from './paying-fetch';
export { generatePaymentIdentifier, isPaymentIdentifier } from './payment-identifier';
export { SpendLedger, type SpendLimits } from './spend-limits';
