import type { GateResponse, RequestView } from '../http/types';
import type { PaymentRequired } from '../protocol/schemas';
import { checkPaywallOptions, type PaywallOptions, resolvePaywallOptions } from './paywall-options';
import { prefersHtml } from './prefers-html';
import { PAYWALL_CSP, renderPaywallPage } from './render-paywall-page';

export { checkPaywallOptions };

/** Most pages kept rendered (one per resource URL and challenge). */
const PAGES_MAX = 256;

/** Turns a 402 challenge into what a browser or a machine client should get. */
export interface BrowserPaywall {
  /**
   * The challenge as the request asks for it: a page for a GET or HEAD whose `Accept` names
   * HTML and not JSON (same status and headers, an HTML body), the JSON challenge otherwise.
   * Both carry `Vary: Accept`. A challenge without a `PAYMENT-REQUIRED` header (x402 v1) stays
   * JSON.
   */
  respond(request: RequestView, challenge: GateResponse): GateResponse;
}

/**
 * Creates the browser paywall of `PaymentGateOptions.paywall` (docs/paywall.md). Pages are
 * rendered once per challenge text and kept (bounded).
 *
 * @example
 * const paywall = createBrowserPaywall({ appName: 'Fee service' });
 * const answer = paywall.respond(request, challengeResponse);
 */
export function createBrowserPaywall(options: PaywallOptions | true): BrowserPaywall {
  const resolved = resolvePaywallOptions(options);
  const pages = new Map<string, Uint8Array>();
  // The page pays from the compact challenge of PAYMENT-REQUIRED, as an x402 client does, never from
  // the 402 body: the body's extensions carry whole schemas, and the payment echoes the extensions
  // it was built from. Built from the header, PAYMENT-SIGNATURE stays within a proxy's default
  // header buffers (docs/production.md#the-size-of-a-payment).
  const pageOf = (header: string): Uint8Array => {
    let page = pages.get(header);
    if (page === undefined) {
      const challenge = JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as PaymentRequired;
      page = Buffer.from(renderPaywallPage(challenge, resolved), 'utf8');
      if (pages.size >= PAGES_MAX) pages.delete(pages.keys().next().value as string);
      pages.set(header, page);
    }
    return page;
  };
  return {
    respond(request, challenge) {
      const header = challenge.headers['payment-required'];
      const method = request.method.toUpperCase();
      const vary = { ...challenge.headers, vary: 'Accept' };
      if (
        typeof header !== 'string' ||
        (method !== 'GET' && method !== 'HEAD') ||
        !prefersHtml(request.header('accept'))
      ) {
        return { ...challenge, headers: vary };
      }
      return {
        status: challenge.status,
        headers: {
          ...vary,
          'content-type': 'text/html; charset=utf-8',
          'content-security-policy': PAYWALL_CSP,
          'x-content-type-options': 'nosniff',
          'referrer-policy': 'no-referrer',
        },
        body: pageOf(header),
      };
    },
  };
}
