import { Readable } from 'node:stream';
import { createPaymentGate, decodeHeaderJson, encodeHeader, type RouteConfig } from '@tollbooth/core';
import { createResourceCatalog } from '@tollbooth/core/discovery';
import {
  buildPayment,
  createScriptedFacilitator,
  createSimpleScheme,
  TEST_PAY_TO,
  TEST_PAYER,
  TEST_TX,
} from '@tollbooth/core/testing';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { tollbooth } from './index';

const network = 'eip155:8453';
const payment: RouteConfig = {
  accepts: { network, payTo: TEST_PAY_TO, price: '$0.001' },
  description: 'paid',
};
const gateOptions = () => ({ schemes: [createSimpleScheme()], facilitator: createScriptedFacilitator() });

let app: FastifyInstance;
afterEach(() => app?.close());

const pay = (fastify: FastifyInstance, key: string) =>
  encodeHeader(buildPayment(fastify.tollbooth.routes.get(key)!.requirements[0]!));

describe('the tollbooth Fastify plugin', () => {
  it('reads the routes option relative to the prefix it is registered under', async () => {
    app = Fastify();
    await app.register(
      async (v1) => {
        await v1.register(tollbooth, { ...gateOptions(), routes: { 'GET /quote': payment } });
        v1.get('/quote', async () => ({ quote: 1 }));
        v1.get('/free', async () => ({ free: true }));
      },
      { prefix: '/v1' },
    );
    await app.ready();
    expect((await app.inject('/v1/quote')).statusCode).toBe(402);
    expect((await app.inject('/v1/free')).json()).toEqual({ free: true });
  });

  it('puts routes declared in config.payment into the table discovery reads, without their HEAD twins', async () => {
    app = Fastify();
    let gate: ReturnType<typeof createPaymentGate> | undefined;
    await app.register(
      async (api) => {
        await api.register(tollbooth, gateOptions());
        api.get('/a/:id', { config: { payment } }, async () => ({}));
        api.route({ method: ['GET', 'POST'], url: '/b', config: { payment }, handler: async () => ({}) });
        api.get('/c', async () => ({}));
        api.addHook('onReady', async () => {
          gate = api.tollbooth.gate;
        });
      },
      { prefix: '/api' },
    );
    await app.ready();
    expect(gate?.routes.routes.map((r) => r.key).sort()).toEqual([
      'GET /api/a/:id',
      'GET /api/b',
      'POST /api/b',
    ]);
    const catalog = createResourceCatalog({
      table: () => gate!.routes,
      baseUrl: 'https://api.example.com',
      facilitatorUrl: 'https://x402.org/facilitator',
    });
    expect(catalog.items().map((item) => item.resource)).toContain('https://api.example.com/api/b');
  });

  it('settles a streamed reply and sends the buffered bytes with the receipt', async () => {
    app = Fastify();
    await app.register(tollbooth, gateOptions());
    app.get('/stream', { config: { payment } }, async (_request, reply) =>
      reply.type('text/plain').send(Readable.from(['chunk one, ', 'chunk two'])),
    );
    await app.ready();
    const res = await app.inject({
      url: '/stream',
      headers: { 'payment-signature': pay(app, 'GET /stream') },
    });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('chunk one, chunk two');
    expect(res.headers['content-length']).toBe('20');
    expect(decodeHeaderJson(res.headers['payment-response'] as string)).toEqual({
      success: true,
      transaction: TEST_TX,
      network,
      payer: TEST_PAYER,
    });
  });

  it('leaves a 402 body alone once an onSend hook registered before it has transformed it', async () => {
    app = Fastify();
    // Stands in for a compression plugin: it replaces the payload before the gate's hook runs.
    app.addHook('onSend', async (_request, reply, payload) => {
      if (reply.statusCode !== 402) return payload;
      reply.header('x-transformed', 'yes');
      return Buffer.from(`wrapped:${String(payload)}`);
    });
    await app.register(tollbooth, { ...gateOptions(), routes: { 'GET /paid': payment } });
    app.get('/paid', async () => ({}));
    await app.ready();
    const res = await app.inject('/paid');
    expect(res.statusCode).toBe(402);
    expect(res.headers['x-transformed']).toBe('yes');
    expect(res.body.startsWith('wrapped:{"x402Version":2')).toBe(true);
    expect(res.headers['content-type']).toBe('application/json');
  });

  it('puts the payment on request.payment for paid routes and null elsewhere', async () => {
    app = Fastify();
    await app.register(tollbooth, { ...gateOptions(), routes: { 'GET /paid': payment } });
    app.get('/paid', async (request) => ({ payer: request.payment?.payer }));
    app.get('/free', async (request) => ({ payment: request.payment }));
    await app.ready();
    const paid = await app.inject({ url: '/paid', headers: { 'payment-signature': pay(app, 'GET /paid') } });
    expect(paid.json().payer).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect((await app.inject('/free')).json()).toEqual({ payment: null });
  });

  it('fails ready() with invalid_config when routes are declared twice or invalid', async () => {
    app = Fastify();
    await app.register(tollbooth, { ...gateOptions(), routes: { 'GET /x': payment } });
    app.get('/x', { config: { payment } }, async () => ({}));
    await expect(app.ready()).rejects.toMatchObject({ code: 'invalid_config' });
    await app.close();

    app = Fastify();
    await app.register(tollbooth, gateOptions());
    app.get('/y', { config: { payment: { accepts: [] } } }, async () => ({}));
    await expect(app.ready()).rejects.toThrow(/route "GET \/y": accepts needs at least one payment option/);
  });

  it('refuses config.payment when it is given a gate built elsewhere', async () => {
    app = Fastify();
    const gate = createPaymentGate({ ...gateOptions(), routes: { 'GET /x': payment } });
    await app.register(tollbooth, { gate });
    app.get('/y', { config: { payment } }, async () => ({}));
    await expect(app.ready()).rejects.toThrow(/route \/y: config.payment needs the plugin to own the gate/);
  });

  it('answers nothing about the gate before the instance is ready', async () => {
    app = Fastify();
    await app.register(tollbooth, gateOptions());
    expect(() => app.tollbooth.gate).toThrow(/once Fastify is ready/);
  });
});
