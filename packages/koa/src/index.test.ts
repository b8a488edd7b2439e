import { Readable } from 'node:stream';
import Router from '@koa/router';
import { decodeHeaderJson, encodeHeader, type RoutesConfig } from '@tollbooth/core';
import {
  buildPayment,
  createScriptedFacilitator,
  createSimpleScheme,
  type ScriptedFacilitator,
  TEST_PAY_TO,
  TEST_PAYER,
  TEST_TX,
} from '@tollbooth/core/testing';
import Koa from 'koa';
import request from 'supertest';
import { beforeEach, describe, expect, it } from 'vitest';
import { type TollboothMiddleware, tollbooth } from './index';

const accepts = { network: 'eip155:8453', payTo: TEST_PAY_TO, price: '$0.001' };
const routes: RoutesConfig = { 'GET /v1/*': { accepts } };

let facilitator: ScriptedFacilitator;
let middleware: TollboothMiddleware;
let app: Koa;
let throws = true;

beforeEach(() => {
  facilitator = createScriptedFacilitator();
  middleware = tollbooth({ routes, schemes: [createSimpleScheme()], facilitator });
  app = new Koa();
  app.silent = true;
  const router = new Router({ prefix: '/v1' });
  router.get('/json', (ctx) => {
    ctx.body = { payer: ctx.state.payment?.payer };
  });
  router.get('/text', (ctx) => {
    ctx.body = 'plain text';
  });
  router.get('/buffer', (ctx) => {
    ctx.type = 'application/octet-stream';
    ctx.body = Buffer.from([0, 1, 2, 255]);
  });
  router.get('/stream', (ctx) => {
    ctx.type = 'text/csv';
    ctx.body = Readable.from(['a,b\n', '1,2\n']);
  });
  router.get('/empty', (ctx) => {
    ctx.status = 204;
  });
  router.get('/boom', () => {
    if (throws) throw new Error('boom');
  });
  app.use(middleware);
  app.use(router.routes());
  throws = true;
});

/** The receipt the scripted facilitator's settlement produces, as the client decodes it. */
const receipt = { success: true, transaction: TEST_TX, network: 'eip155:8453', payer: TEST_PAYER };

const header = () => encodeHeader(buildPayment(middleware.gate.routes.get('GET /v1/*')!.requirements[0]!));
const paid = (path: string, value = header()) =>
  request(app.callback()).get(path).set('PAYMENT-SIGNATURE', value).buffer(true);

describe('tollbooth() on Koa 3 with @koa/router', () => {
  it('settles a JSON body and gives the handler the payment on ctx.state.payment', async () => {
    const res = await paid('/v1/json');
    expect(res.status).toBe(200);
    expect(res.body.payer).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(decodeHeaderJson(String(res.headers['payment-response']))).toEqual(receipt);
  });

  it.each([
    ['a string', '/v1/text', 'text/plain', Buffer.from('plain text')],
    ['a Buffer', '/v1/buffer', 'application/octet-stream', Buffer.from([0, 1, 2, 255])],
    ['a stream', '/v1/stream', 'text/csv', Buffer.from('a,b\n1,2\n')],
  ])('sends %s body byte for byte after settlement', async (_kind, path, type, bytes) => {
    const res = await paid(path).parse((response, done) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => done(null, Buffer.concat(chunks)));
    });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain(type);
    expect(Buffer.compare(res.body as Buffer, bytes)).toBe(0);
    expect(res.headers['content-length']).toBe(String(bytes.length));
    expect(facilitator.calls.settle).toBe(1);
  });

  it('settles an empty 204 answer', async () => {
    const res = await paid('/v1/empty');
    expect(res.status).toBe(204);
    expect(decodeHeaderJson(String(res.headers['payment-response']))).toEqual(receipt);
  });

  it('releases the payment when a handler throws, so the same payload pays afterwards', async () => {
    const value = header();
    const failed = await paid('/v1/boom', value);
    expect(failed.status).toBe(500);
    expect(failed.headers['payment-response']).toBeUndefined();
    expect(facilitator.calls.settle).toBe(0);
    throws = false;
    const retried = await paid('/v1/boom', value);
    expect(retried.status).toBe(404);
    expect(facilitator.calls.settle).toBe(0);
    expect((await paid('/v1/json', value)).status).toBe(200);
  });

  it('leaves unmatched paths of a price pattern unsettled (404 from the router)', async () => {
    const res = await paid('/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(facilitator.calls.settle).toBe(0);
  });
});
