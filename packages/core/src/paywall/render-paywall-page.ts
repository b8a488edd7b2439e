import { createHash } from 'node:crypto';
import { fromAtomicAmount } from '../protocol/money';
import type { PaymentRequired, PaymentRequirements } from '../protocol/schemas';
import type { ResolvedPaywallOptions } from './paywall-options';
import { PAYWALL_SCRIPT } from './paywall-script';

/** Escapes text for HTML content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** JSON safe inside a `<script type="application/json">` element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

// Contrast: every text colour here is at least 4.5:1 on its background (WCAG AA).
const STYLE = `
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1b1f24; background: #f4f6f8; }
main { max-width: 40rem; margin: 0 auto; padding: 1.5rem 1rem 3rem; }
.app { margin: 0; color: #4a5561; font-size: 0.95rem; }
h1 { font-size: 1.6rem; margin: 0.2rem 0 1rem; }
h2 { font-size: 1.2rem; margin: 0 0 0.6rem; }
.card { background: #fff; border: 1px solid #d0d7de; border-radius: 10px; padding: 1.2rem; margin-bottom: 1rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.45rem 1rem; margin: 0 0 1.2rem; }
dt { font-weight: 600; color: #4a5561; }
dd { margin: 0; overflow-wrap: anywhere; }
code { font: 0.9em/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; overflow-wrap: anywhere; }
.price { font-size: 1.25rem; font-weight: 700; }
.actions { display: flex; flex-wrap: wrap; gap: 0.6rem; }
button { font: inherit; font-weight: 600; padding: 0.7rem 1.2rem; border-radius: 8px; border: 2px solid #0b57d0; background: #0b57d0; color: #fff; cursor: pointer; min-height: 44px; }
button.secondary { background: #fff; color: #0b57d0; }
button:disabled { opacity: 0.6; cursor: progress; }
button:focus-visible, a:focus-visible, pre:focus-visible { outline: 3px solid #b45309; outline-offset: 2px; }
[tabindex="-1"]:focus { outline: none; }
.status { margin: 0 0 1rem; padding: 0; overflow-wrap: anywhere; }
.status:not(:empty) { padding: 0.75rem 0.9rem; border-radius: 8px; background: #e8edf3; }
.status-error:not(:empty) { background: #fdecea; color: #8a1c12; border: 1px solid #f3b8b0; }
.status-ok:not(:empty) { background: #e7f5ea; color: #14532d; border: 1px solid #a7d7b4; }
pre { background: #0f172a; color: #e2e8f0; padding: 1rem; border-radius: 8px; overflow: auto; max-height: 60vh; font-size: 0.85rem; }
a { color: #0b57d0; }
a:not([href]) { color: inherit; }
details { color: #4a5561; font-size: 0.9rem; }
@media (max-width: 30rem) { dl { grid-template-columns: 1fr; } dt { margin-top: 0.4rem; } h1 { font-size: 1.35rem; } }
`;

/** `sha256-…` of an inline element's text, as a Content-Security-Policy source. */
function cspHash(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/**
 * The page's Content-Security-Policy: only its own inline script and style (by hash), requests
 * only to its own origin (the paid retry), nothing framed, no forms. A wallet extension's
 * injected provider is not affected by a page's CSP.
 */
export const PAYWALL_CSP = [
  "default-src 'none'",
  `script-src ${cspHash(PAYWALL_SCRIPT)}`,
  `style-src ${cspHash(STYLE)}`,
  "connect-src 'self'",
  'img-src blob: data:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The requirement the page pays: the first `exact` payment on an `eip155` network. */
export function payableIndex(accepts: readonly PaymentRequirements[]): number {
  return accepts.findIndex(
    (r) =>
      r.scheme === 'exact' &&
      /^eip155:\d+$/.test(r.network) &&
      typeof r.extra?.['name'] === 'string' &&
      typeof r.extra?.['version'] === 'string',
  );
}

function shortAddress(address: string): string {
  return address.length > 14 ? `${address.slice(0, 8)}…${address.slice(-6)}` : address;
}

/** What the page says about one requirement's price, network and token. */
function offerOf(requirement: PaymentRequirements, options: ResolvedPaywallOptions) {
  const chainId = Number(requirement.network.split(':')[1]);
  const network = options.networks[requirement.network];
  const decimals = options.usdAssets[requirement.asset.toLowerCase()];
  const token = typeof requirement.extra?.['name'] === 'string' ? requirement.extra['name'] : 'token';
  const usd = decimals === undefined ? undefined : fromAtomicAmount(requirement.amount, decimals);
  return {
    chainId,
    networkName: network?.name ?? `chain ${chainId}`,
    token,
    decimals,
    price: usd === undefined ? `${requirement.amount} atomic units of ${token}` : `$${usd}`,
    detail:
      usd === undefined
        ? `token ${requirement.asset}`
        : `${usd} ${token} (${requirement.amount} atomic units) · token ${shortAddress(requirement.asset)}`,
  };
}

/**
 * Renders the paywall page of a 402 challenge: what is sold, the price, the network, a "Pay
 * with wallet" button and the script that pays (`PAYWALL_SCRIPT`). The challenge is embedded as
 * JSON; nothing is fetched from anywhere else.
 */
export function renderPaywallPage(challenge: PaymentRequired, options: ResolvedPaywallOptions): string {
  const index = payableIndex(challenge.accepts);
  const requirement = index >= 0 ? challenge.accepts[index] : undefined;
  const offer = requirement ? offerOf(requirement, options) : undefined;
  const description = challenge.resource.description || 'A paid resource';
  const chainNames: Record<string, string> = {};
  for (const [id, network] of Object.entries(options.networks)) {
    if (id.startsWith('eip155:') && network.name) chainNames[id.slice('eip155:'.length)] = network.name;
  }
  const settings = {
    index,
    chainId: offer?.chainId,
    chainNames,
    decimals: offer?.decimals ?? null,
    token: offer?.token ?? 'token',
    explorerTxUrl: requirement ? (options.networks[requirement.network]?.explorerTxUrl ?? null) : null,
    addChain: requirement ? (options.networks[requirement.network]?.addChain ?? null) : null,
  };
  const terms = offer
    ? `<dl>
<dt>What you get</dt><dd>${escapeHtml(description)}<br><code>${escapeHtml(challenge.resource.url)}</code></dd>
<dt>Price</dt><dd><span class="price">${escapeHtml(offer.price)}</span><br><small>${escapeHtml(offer.detail)}</small></dd>
<dt>Network</dt><dd>${escapeHtml(offer.networkName)} <small>(${escapeHtml(requirement!.network)})</small></dd>
<dt>Paid to</dt><dd><code>${escapeHtml(requirement!.payTo)}</code></dd>
</dl>`
    : `<p>${escapeHtml(description)}: none of the payment options offered here (${escapeHtml(
        challenge.accepts.map((r) => `${r.scheme} on ${r.network}`).join(', '),
      )}) can be paid from this page. Use an x402 client.</p>`;
  const app = options.appName ? `<p class="app">${escapeHtml(options.appName)}</p>` : '';
  const title = `Payment required: ${description}${options.appName ? ` · ${options.appName}` : ''}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body data-paywall-state="loading">
<main>
${app}<h1 id="paywall-title">Payment required</h1>
<section class="card" id="paywall-offer" aria-labelledby="paywall-offer-heading">
<h2 id="paywall-offer-heading">${escapeHtml(description)}</h2>
${terms}
<div class="actions">
<button type="button" id="paywall-pay"${offer ? '' : ' disabled'}>Pay with wallet</button>
<button type="button" id="paywall-switch" class="secondary" hidden>Switch wallet to ${escapeHtml(offer?.networkName ?? 'the network')}</button>
<button type="button" id="paywall-retry" class="secondary" hidden>Retry with the same signed payment</button>
</div>
<noscript><p>Paying from this page needs JavaScript and a browser wallet. x402 clients read the offer from the <code>PAYMENT-REQUIRED</code> header.</p></noscript>
</section>
<div id="paywall-status" class="status" role="status" aria-live="polite"></div>
<section class="card" id="paywall-result" aria-labelledby="paywall-result-heading" hidden>
<h2 id="paywall-result-heading" tabindex="-1">Your paid answer</h2>
<dl><dt>Transaction</dt><dd><a id="paywall-transaction" rel="noopener noreferrer"></a></dd></dl>
<pre id="paywall-answer" tabindex="0" aria-label="The paid answer"></pre>
</section>
<details><summary>For developers</summary><p>This is an x402 payment page. The same 402 response carries the offer in its <code>PAYMENT-REQUIRED</code> header; a program pays by sending <code>PAYMENT-SIGNATURE</code>. Requests that accept <code>application/json</code> never get this page.</p></details>
</main>
<script id="x402-challenge" type="application/json">${scriptJson(challenge)}</script>
<script id="x402-paywall" type="application/json">${scriptJson(settings)}</script>
<script>${PAYWALL_SCRIPT}</script>
</body>
</html>
`;
}
