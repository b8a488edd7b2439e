// Fastify 5 hello app, bare, with the Tollbooth plugin or with one no-op onRequest hook:
// `bench/servers/fastify.ts bare|tollbooth|noop|bytes402|bytesreplay` (see modeOf).
import { tollbooth } from '@tollbooth/fastify';
import Fastify from 'fastify';
import { HELLO_BODY, HELLO_PATH, PAID_PATH } from '../lib/fixtures';
import { announce } from '../lib/serve';
import { fixedResponse, modeOf, tollboothOptions } from './tollbooth-options';

const app = Fastify({ logger: false });
const mode = modeOf(process.argv);
if (mode === 'tollbooth') await app.register(tollbooth, tollboothOptions());
if (mode === 'noop') app.addHook('onRequest', (_request, _reply, done) => done());
app.get(HELLO_PATH, async () => HELLO_BODY);
const fixed = await fixedResponse(mode);
if (fixed) {
  // Written as the adapter writes it: sent as a Buffer (so Fastify keeps the content type), the
  // ASCII text swapped in on onSend (Node then writes head and body in one piece).
  const { status, headers, body } = fixed;
  const bytes = Buffer.from(body);
  const text = bytes.toString('latin1');
  app.addHook('onSend', (_request, _reply, payload, done) => done(null, payload === bytes ? text : payload));
  app.get(PAID_PATH, (_request, reply) => {
    reply.code(status).headers(headers).send(bytes);
  });
} else app.get(PAID_PATH, async () => HELLO_BODY);
await app.listen({ port: 0, host: '127.0.0.1' });
await announce(app.server);
