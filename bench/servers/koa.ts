// Koa 3 hello app (with @koa/router), bare, behind tollbooth() or behind one no-op middleware:
// `bench/servers/koa.ts bare|tollbooth|noop|bytes402|bytesreplay` (see modeOf).
import { createServer } from 'node:http';
import Router from '@koa/router';
import { tollbooth } from '@tollbooth/koa';
import Koa from 'koa';
import { HELLO_BODY, HELLO_PATH, PAID_PATH } from '../lib/fixtures';
import { announce } from '../lib/serve';
import { fixedResponse, modeOf, tollboothOptions } from './tollbooth-options';

const app = new Koa();
const router = new Router();
router.get(HELLO_PATH, (ctx) => {
  ctx.body = HELLO_BODY;
});
const mode = modeOf(process.argv);
const fixed = await fixedResponse(mode);
if (fixed) {
  const { status, headers, body } = fixed;
  const text = Buffer.from(body).toString('latin1');
  router.get(PAID_PATH, (ctx) => {
    ctx.status = status;
    ctx.set(headers);
    ctx.body = text;
  });
} else {
  router.get(PAID_PATH, (ctx) => {
    ctx.body = HELLO_BODY;
  });
}
if (mode === 'tollbooth') app.use(tollbooth(tollboothOptions()));
if (mode === 'noop') app.use((_ctx, next) => next());
app.use(router.routes());
await announce(createServer(app.callback()));
