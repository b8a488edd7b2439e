// The browser paywall through each adapter (Express, Fastify, Koa) over real HTTP, with a CORS
// layer before the gate as real applications have: a browser navigation gets the page with the
// JSON challenge's status and PAYMENT-REQUIRED header, the CORS layer's headers kept and its
// `Vary: Origin` kept beside the paywall's `Vary: Accept` (a cache must not hand one origin's or
// one Accept's answer to another); HEAD gets the same head and no body; machine clients get JSON;
// the page's paid retry (PAYMENT-SIGNATURE, Accept: application/json) gets the handler's answer.
// The payment side is core's scripted facilitator; test/paywall-browser.test.ts pays in Chromium.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeHeaderJson, encodeHeader, type PaymentGateOptions, type RoutesConfig } from '@tollbooth/core';
import {
  buildPayment,
  createScriptedFacilitator,
  createSimpleScheme,
  TEST_PAY_TO,
} from '@tollbooth/core/testing';
import { tollbooth as expressTollbooth } from '@tollbooth/express';
import { tollbooth as fastifyTollbooth } from '@tollbooth/fastify';
import { tollbooth as koaTollbooth } from '@tollbooth/koa';
import express from 'express';
import Fastify from 'fastify';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const ORIGIN = 'https://wallet.example';
const routes: RoutesConfig = {
  'GET /paid': {
    accepts: { network: 'eip155:8453', payTo: TEST_PAY_TO, price: '$0.001' },
    description: 'A paid answer',
  },
};

/** What a CORS layer before the gate sets on every response. */
const CORS = {
  'access-control-allow-origin': ORIGIN,
  'access-control-expose-headers': 'X-Trace',
  vary: 'Origin',
};

interface Target {
  url: string;
  close(): Promise<void>;
}

function listenNode(server: Server): Promise<Target> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

type Options = PaymentGateOptions & { routes: RoutesConfig };

const ADAPTERS: Record<string, (options: Options) => Promise<Target>> = {
  async express(options) {
    const app = express();
    app.use((_req, res, next) => {
      res.set(CORS);
      next();
    });
    app.use(expressTollbooth(options));
    app.get('/paid', (req, res) => {
      res.json({ ok: true, payer: req.payment?.payer });
    });
    return listenNode(createServer(app));
  },
  async fastify(options) {
    const app = Fastify({ forceCloseConnections: true });
    app.addHook('onRequest', (_request, reply, done) => {
      reply.headers(CORS);
      done();
    });
    await app.register(fastifyTollbooth, options);
    app.get('/paid', async (request) => ({ ok: true, payer: request.payment?.payer }));
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    return { url, close: () => app.close() };
  },
  async koa(options) {
    const app = new Koa();
    app.use((ctx, next) => {
      ctx.set(CORS);
      return next();
    });
    app.use(koaTollbooth(options));
    app.use((ctx) => {
      ctx.body = { ok: true, payer: ctx.state.payment?.payer };
    });
    return listenNode(createServer(app.callback()));
  },
};

/** The comma-separated members of a list header, lower-cased. */
const members = (value: string | null) =>
  (value ?? '').split(',').map((member) => member.trim().toLowerCase());

describe.each(Object.keys(ADAPTERS))('the browser paywall on %s', (adapter) => {
  let target: Target;
  const facilitator = createScriptedFacilitator();
  let gateRequirement: () => Parameters<typeof buildPayment>[0];

  beforeAll(async () => {
    const scheme = createSimpleScheme();
    const options: Options = {
      routes,
      schemes: [scheme],
      facilitator,
      paywall: { appName: 'Adapter test' },
    };
    target = await ADAPTERS[adapter]!(options);
    // The requirement the gate offers, read from its JSON challenge.
    const challenge = (await (await fetch(`${target.url}/paid`)).json()) as {
      accepts: Array<Parameters<typeof buildPayment>[0]>;
    };
    gateRequirement = () => challenge.accepts[0]!;
  });
  afterAll(() => target?.close());

  it('answers a browser navigation with the page: same status and PAYMENT-REQUIRED, the CORS headers and both Vary members kept', async () => {
    const json = await fetch(`${target.url}/paid`, {
      headers: { accept: 'application/json', origin: ORIGIN },
    });
    const page = await fetch(`${target.url}/paid`, { headers: { accept: BROWSER_ACCEPT, origin: ORIGIN } });
    const html = await page.text();
    expect(page.status).toBe(402);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('payment-required')).toBe(json.headers.get('payment-required'));
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain('Pay with wallet');
    expect(html).toContain('A paid answer');
    expect(Number(page.headers.get('content-length'))).toBe(Buffer.byteLength(html));
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(members(page.headers.get('access-control-expose-headers'))).toEqual(
      expect.arrayContaining(['x-trace', 'payment-required']),
    );
    expect(members(page.headers.get('vary'))).toEqual(expect.arrayContaining(['origin', 'accept']));

    // The machine client's answer differs by Accept only: JSON, same Vary.
    expect(json.status).toBe(402);
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await json.json()) as { x402Version: number }).x402Version).toBe(2);
    expect(members(json.headers.get('vary'))).toEqual(expect.arrayContaining(['origin', 'accept']));
  });

  it('answers HEAD from a browser with the page head and no body', async () => {
    const get = await fetch(`${target.url}/paid`, { headers: { accept: BROWSER_ACCEPT } });
    const head = await fetch(`${target.url}/paid`, { method: 'HEAD', headers: { accept: BROWSER_ACCEPT } });
    expect(head.status).toBe(402);
    expect(head.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(head.headers.get('content-length')).toBe(get.headers.get('content-length'));
    expect(head.headers.get('payment-required')).toBe(get.headers.get('payment-required'));
    expect(await head.text()).toBe('');
  });

  it.each([
    ['anything', '*/*'],
    ['JSON and HTML', 'application/json, text/html'],
    ['nothing', undefined],
  ])('keeps JSON for a client accepting %s', async (_name, accept) => {
    const response = await fetch(`${target.url}/paid`, accept === undefined ? {} : { headers: { accept } });
    expect(response.status).toBe(402);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await response.json()) as { x402Version: number }).x402Version).toBe(2);
  });

  it("answers the page's paid retry with the handler's JSON and the receipt", async () => {
    const settles = facilitator.calls.settle;
    const response = await fetch(`${target.url}/paid`, {
      headers: {
        accept: 'application/json',
        origin: ORIGIN,
        'payment-signature': encodeHeader(buildPayment(gateRequirement())),
      },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await response.json()) as { ok: boolean }).ok).toBe(true);
    expect(decodeHeaderJson(response.headers.get('payment-response')!)).toMatchObject({ success: true });
    expect(response.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    expect(facilitator.calls.settle).toBe(settles + 1);
  });
});
