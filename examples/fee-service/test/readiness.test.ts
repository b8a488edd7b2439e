// /readyz follows the facilitator: ready while it answers /supported, not ready at the next probe
// once it stops (the payment client's memoised /supported answer kept it "ready" for 10 minutes).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunningFeeService } from '../src/service';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';
import { removeScratch, startTestService } from './support/harness';

let simulator: MempoolSimulator;
let facilitator: Server;
let service: RunningFeeService;

beforeAll(async () => {
  simulator = await startMempoolSimulator({ scenario: 'calm', seed: 3 });
  facilitator = createServer((req, res) => {
    if (req.url !== '/supported') return res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        kinds: [{ x402Version: 2, scheme: 'exact', network: 'eip155:8453' }],
        extensions: [],
        signers: {},
      }),
    );
  });
  await new Promise<void>((resolve) => facilitator.listen(0, '127.0.0.1', resolve));
  const port = (facilitator.address() as AddressInfo).port;
  service = await startTestService(
    {
      OBSERVATORY_ENABLED: 'false',
      FACILITATOR_URL: `http://127.0.0.1:${port}`,
      PAY_TO: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
    },
    { simulator },
  );
});
afterAll(async () => {
  await service?.close();
  await simulator?.close();
  facilitator?.closeAllConnections();
  removeScratch();
});

type ReadyBody = { status: string; checks: Record<string, { ok: boolean; detail?: string }> };

it('answers 503 once the facilitator stops answering, and says which check failed', async () => {
  const ready = await fetch(`${service.url}/readyz`);
  expect(ready.status).toBe(200);
  expect(((await ready.json()) as ReadyBody).checks['facilitator']).toEqual({ ok: true });

  await new Promise<void>((resolve) => {
    facilitator.close(() => resolve());
    facilitator.closeAllConnections();
  });
  // The probe's answer is reused for a second: ask until it is a new one (a hang guard bounds it).
  let body: ReadyBody | undefined;
  for (const guard = Date.now() + 60_000; Date.now() < guard; ) {
    const response = await fetch(`${service.url}/readyz`);
    body = (await response.json()) as ReadyBody;
    if (response.status === 503) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(body?.status).toBe('not_ready');
  expect(body?.checks['facilitator']?.ok).toBe(false);
  expect(body?.checks['snapshot']).toEqual({ ok: true });
});
