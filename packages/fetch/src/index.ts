// @tollbooth/fetch: a paying fetch wrapper for x402 APIs.
export { type CreateEvmPaymentSignerParameters, createEvmPaymentSigner } from './evm-signer';
export {
  createPayingClient,
  DEFAULTS,
  type PaidResponse,
  type PayingClient,
  type PayingClientOptions,
  PaymentClientError,
  type PaymentSigner,
  readChallenge,
  readReceipt,
} from './paying-fetch';
export { SpendLedger, type SpendLimits } from './spend-limits';
