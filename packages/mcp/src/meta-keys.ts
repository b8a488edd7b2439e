/**
 * The `_meta` keys of the x402 MCP transport (`docs/mcp.md#the-_meta-keys`): the payment a client
 * sends with a `tools/call`, and the settlement receipt a result carries back.
 */
export const PAYMENT_META_KEY = 'x402/payment';
/** The settlement receipt (`SettleResponse` object) on a paid tool's result. */
export const PAYMENT_RESPONSE_META_KEY = 'x402/payment-response';
/** x402 v1 clients (Vercel's `x402-mcp`): the base64 `X-PAYMENT` text of a v1 payment. */
export const V1_PAYMENT_META_KEY = 'x402.payment';
/** The receipt answered to a v1 payment. */
export const V1_PAYMENT_RESPONSE_META_KEY = 'x402.payment-response';
/**
 * Tollbooth's own key on a paid tool in `tools/list`: its resource URL and requirements, so an
 * agent sees the price before calling (`docs/mcp.md#prices-before-calling`).
 */
export const PRICE_META_KEY = 'tollbooth/price';
