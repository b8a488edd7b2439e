// Express 5 hello app behind the official @x402/express middleware. The official resource server
// fetches /supported when it starts: a tiny facilitator on loopback answers it at once. No
// browser headers are ever sent, so @x402/paywall (not installed) is never needed.
import { createServer } from 'node:http';
import { HTTPFacilitatorClient, x402ResourceServer } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { paymentMiddleware } from '@x402/express';
import express from 'express';
import {
  HELLO_BODY,
  HELLO_PATH,
  MAX_TIMEOUT_SECONDS,
  NETWORK,
  PAID_PATH,
  PAY_TO,
  PRICE,
} from '../lib/fixtures';
import { announce } from '../lib/serve';

const facilitator = createServer((req, res) => {
  res.setHeader('content-type', 'application/json');
  if (req.url === '/supported') {
    res.end(
      JSON.stringify({
        kinds: [{ x402Version: 2, scheme: 'exact', network: NETWORK }],
        extensions: [],
        signers: {},
      }),
    );
  } else {
    res.statusCode = 404;
    res.end('{}');
  }
});
await new Promise<void>((resolve) => facilitator.listen(0, '127.0.0.1', resolve));
const { port } = facilitator.address() as { port: number };
facilitator.unref();

const resourceServer = new x402ResourceServer(
  new HTTPFacilitatorClient({ url: `http://127.0.0.1:${port}` }),
).register(NETWORK, new ExactEvmScheme());

const app = express();
app.disable('x-powered-by');
app.disable('etag');
app.use(
  paymentMiddleware(
    {
      [`GET ${PAID_PATH}`]: {
        accepts: {
          scheme: 'exact',
          network: NETWORK,
          payTo: PAY_TO,
          price: PRICE,
          maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
        },
        description: 'a benchmark resource',
      },
    },
    resourceServer,
  ),
);
app.get(HELLO_PATH, (_req, res) => {
  res.json(HELLO_BODY);
});
app.get(PAID_PATH, (_req, res) => {
  res.json(HELLO_BODY);
});
await announce(createServer(app));
