import { Script } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { createPaymentGate } from '../gate/create-payment-gate';
import type { Outcome } from '../gate/types';
import type { GateResponse, RequestView } from '../http/types';
import type { PaymentRequired } from '../protocol/schemas';
import type { RoutesConfig } from '../routes/types';
import { createScriptedFacilitator } from '../test-support/scripted-facilitator';
import { createSimpleScheme, TEST_PAY_TO } from '../test-support/simple-scheme';
import { resolvePaywallOptions } from './paywall-options';
import { PAYWALL_SCRIPT } from './paywall-script';
import { prefersHtml } from './prefers-html';
import { PAYWALL_CSP, renderPaywallPage } from './render-paywall-page';

const BASE = 'https://api.example.com';
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8';
const routes: RoutesConfig = {
  'GET /paid': {
    accepts: { network: 'eip155:8453', payTo: TEST_PAY_TO, price: '$0.001' },
    description: 'A <b>fee</b> decision',
  },
  'GET /old': { accepts: { network: 'eip155:8453', payTo: TEST_PAY_TO, price: '$0.01' }, x402Version: 1 },
  'POST /paid': { accepts: { network: 'eip155:8453', payTo: TEST_PAY_TO, price: '$0.001' } },
};

function gateWith(paywall: Parameters<typeof createPaymentGate>[0]['paywall']) {
  return createPaymentGate({
    routes,
    schemes: [createSimpleScheme()],
    facilitator: createScriptedFacilitator(),
    baseUrl: BASE,
    reconcileIntervalMs: 0,
    ...(paywall === undefined ? {} : { paywall }),
  });
}

function view(path: string, headers: Record<string, string> = {}, method = 'GET'): RequestView {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return { method, url: `${BASE}${path}`, header: (name) => lower[name.toLowerCase()] };
}

function responseOf(outcome: Outcome): GateResponse {
  if (outcome.kind !== 'respond') throw new Error(`expected a response, got ${outcome.kind}`);
  return outcome.response;
}
const text = (response: GateResponse) => Buffer.from(response.body).toString('utf8');

describe('prefersHtml', () => {
  it.each([
    [BROWSER_ACCEPT, true],
    ['text/html', true],
    ['application/xhtml+xml', true],
    ['*/*', false],
    ['application/json', false],
    ['text/html, application/json', false],
    ['text/html;q=0.9, application/json;q=0.5', false],
    ['text/html, application/json;q=0', true],
    ['text/html;q=0, */*', false],
    ['TEXT/HTML ; q=1', true],
    ['', false],
    [undefined, false],
  ])('%s -> %s', (accept, expected) => {
    expect(prefersHtml(accept)).toBe(expected);
  });
});

describe('the browser paywall of the gate', () => {
  it('answers a browser navigation with a page carrying the same status and PAYMENT-REQUIRED header', async () => {
    const gate = gateWith({ appName: 'Fee service' });
    const json = responseOf(await gate.handle(view('/paid')));
    const page = responseOf(await gate.handle(view('/paid', { accept: BROWSER_ACCEPT })));
    expect(page.status).toBe(402);
    expect(json.status).toBe(402);
    expect(page.headers['payment-required']).toBe(json.headers['payment-required']);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['vary']).toBe('Accept');
    expect(page.headers['content-security-policy']).toBe(PAYWALL_CSP);
    expect(page.headers['access-control-expose-headers']).toMatch(/PAYMENT-REQUIRED/i);
    const html = text(page);
    expect(html).toContain('Pay with wallet');
    expect(html).toContain('$0.001');
    expect(html).toContain('Base <small>(eip155:8453)</small>');
    expect(html).toContain('Fee service');
    // the description is escaped in the page and safe inside the embedded JSON
    expect(html).toContain('A &#60;b&#62;fee&#60;/b&#62; decision');
    expect(html).not.toContain('<b>fee</b>');
    const embedded = /<script id="x402-challenge" type="application\/json">(.*?)<\/script>/s.exec(html)![1]!;
    expect(JSON.parse(embedded)).toEqual(JSON.parse(text(json)));
  });

  it('pays from the compact challenge of PAYMENT-REQUIRED, not the 402 body with its whole schemas', async () => {
    const schema = {
      type: 'object',
      properties: { answer: { type: 'string', description: 'x'.repeat(8_000) } },
    };
    const gate = createPaymentGate({
      routes: {
        'GET /paid': {
          ...routes['GET /paid']!,
          extensions: { bazaar: { info: { output: { type: 'json' } }, schema } },
          headerExtensions: { bazaar: { info: { output: { type: 'json' } } } },
        },
      },
      schemes: [createSimpleScheme()],
      facilitator: createScriptedFacilitator(),
      baseUrl: BASE,
      reconcileIntervalMs: 0,
      paywall: true,
    });
    const json = responseOf(await gate.handle(view('/paid')));
    const page = responseOf(await gate.handle(view('/paid', { accept: BROWSER_ACCEPT })));
    const header = JSON.parse(Buffer.from(page.headers['payment-required']!, 'base64').toString('utf8'));
    const embedded = /<script id="x402-challenge" type="application\/json">(.*?)<\/script>/s.exec(
      text(page),
    )![1]!;
    expect(JSON.parse(embedded)).toEqual(header);
    expect(JSON.parse(embedded).extensions).toEqual({ bazaar: { info: { output: { type: 'json' } } } });
    expect(text(json)).toContain('x'.repeat(8_000));
    expect(text(page)).not.toContain('x'.repeat(100));
  });

  it.each([
    ['a client accepting anything', { accept: '*/*' }, 'GET', '/paid'],
    ['a client asking for JSON and HTML', { accept: 'application/json, text/html' }, 'GET', '/paid'],
    ['a client sending no Accept', {}, 'GET', '/paid'],
    ['a POST from a browser', { accept: BROWSER_ACCEPT }, 'POST', '/paid'],
    ['a v1 route (no PAYMENT-REQUIRED header)', { accept: BROWSER_ACCEPT }, 'GET', '/old'],
  ])('keeps the JSON challenge for %s', async (_name, headers, method, path) => {
    const gate = gateWith(true);
    const response = responseOf(await gate.handle(view(path, headers, method)));
    expect(response.status).toBe(402);
    expect(response.headers['content-type']).toBe('application/json');
    expect(response.headers['vary']).toBe('Accept');
    expect(JSON.parse(text(response)).x402Version).toBeGreaterThan(0);
  });

  it('is off by default: a browser gets the JSON challenge without Vary', async () => {
    const response = responseOf(await gateWith(undefined).handle(view('/paid', { accept: BROWSER_ACCEPT })));
    expect(response.headers['content-type']).toBe('application/json');
    expect(response.headers['vary']).toBeUndefined();
  });

  it('refuses invalid paywall options with every problem at once', () => {
    expect(() =>
      gateWith({
        appName: 3 as unknown as string,
        networks: { 'not a network': {}, 'eip155:1': { explorerTxUrl: 'ftp://x' } },
        usdAssets: { '0xabc': 1.5 },
      }),
    ).toThrow(
      /appName must be a string[\s\S]*not a CAIP-2[\s\S]*explorerTxUrl must be[\s\S]*integer number of decimals/,
    );
  });
});

describe('renderPaywallPage', () => {
  const challenge = (accepts: PaymentRequired['accepts']): PaymentRequired => ({
    x402Version: 2,
    resource: { url: 'http://127.0.0.1/x', description: 'Thing' },
    accepts,
  });
  const requirement = {
    scheme: 'exact',
    network: 'eip155:31337',
    amount: '2500',
    asset: '0x1111111111111111111111111111111111111111',
    payTo: TEST_PAY_TO,
    maxTimeoutSeconds: 60,
    extra: { name: 'Devnet Dollar', version: '2' },
  };

  it('shows an unknown asset in atomic units and names a configured network', () => {
    const html = renderPaywallPage(
      challenge([requirement]),
      resolvePaywallOptions({ networks: { 'eip155:31337': { name: 'Local devnet' } } }),
    );
    expect(html).toContain('2500 atomic units of Devnet Dollar');
    expect(html).toContain('Local devnet <small>(eip155:31337)</small>');
  });

  it('prices a configured USD asset in dollars', () => {
    const html = renderPaywallPage(
      challenge([requirement]),
      resolvePaywallOptions({ usdAssets: { [requirement.asset.toUpperCase().replace('0X', '0x')]: 6 } }),
    );
    expect(html).toContain('<span class="price">$0.0025</span>');
  });

  it('says when no offered payment can be paid from the page, and disables the button', () => {
    const html = renderPaywallPage(
      challenge([{ ...requirement, scheme: 'upto', network: 'solana:mainnet' }]),
      resolvePaywallOptions(true),
    );
    expect(html).toContain('upto on solana:mainnet');
    expect(html).toContain('id="paywall-pay" disabled');
  });
});

describe('the paywall script', () => {
  it('is valid JavaScript', () => {
    expect(() => new Script(PAYWALL_SCRIPT)).not.toThrow();
  });
});
