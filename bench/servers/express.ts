// Express 5 hello app, bare, behind tollbooth() or behind one no-op middleware:
// `bench/servers/express.ts bare|tollbooth|noop|bytes402|bytesreplay` (see modeOf).
import { createServer } from 'node:http';
import { tollbooth } from '@tollbooth/express';
import express from 'express';
import { HELLO_BODY, HELLO_PATH, PAID_PATH } from '../lib/fixtures';
import { announce } from '../lib/serve';
import { fixedResponse, modeOf, tollboothOptions } from './tollbooth-options';

const app = express();
app.disable('x-powered-by');
app.disable('etag');
const mode = modeOf(process.argv);
if (mode === 'tollbooth') app.use(tollbooth(tollboothOptions()));
if (mode === 'noop') app.use((_req, _res, next) => next());
app.get(HELLO_PATH, (_req, res) => {
  res.json(HELLO_BODY);
});
const fixed = await fixedResponse(mode);
if (fixed) {
  const { status, headers, body } = fixed;
  const text = Buffer.from(body).toString('latin1');
  app.get(PAID_PATH, (_req, res) => {
    res.status(status).set(headers).end(text);
  });
} else {
  app.get(PAID_PATH, (_req, res) => {
    res.json(HELLO_BODY);
  });
}
await announce(createServer(app));
