// What the service logs about clients: a refused payment and a 429 are one `info` line each, with
// the code, never a stack (the client's doing, not the service's fault).
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningFeeService } from '../src/service';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';
import { removeScratch, startTestService } from './support/harness';

let simulator: MempoolSimulator;
let service: RunningFeeService;
const lines: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  simulator = await startMempoolSimulator({ seed: 7 });
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  service = await startTestService(
    {
      RATE_LIMIT_MAX: '2',
      FACILITATOR_URL: 'http://127.0.0.1:9',
      PAY_TO: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
      OBSERVATORY_ENABLED: 'false',
    },
    { simulator, logger: pino({ level: 'info' }, sink) },
  );
}, 120_000);

afterAll(async () => {
  await service?.close();
  await simulator?.close();
  removeScratch();
});

describe('client-caused outcomes in the logs', () => {
  it('logs a refused payment and a 429 at info, with no stack', async () => {
    const refused = await fetch(`${service.url}/api/v1/fees/now`, {
      headers: { 'payment-signature': 'bm90IGEgcGF5bWVudA==' },
    });
    expect(refused.status).toBe(400);
    const code = ((await refused.json()) as { error: { code: string } }).error.code;
    expect(code).toBe('payment_header_invalid_json');
    expect((await fetch(`${service.url}/api/v1/fees/now`)).status).toBe(402);
    expect((await fetch(`${service.url}/api/v1/fees/now`)).status).toBe(429);

    const refusal = lines.find((line) => line['msg'] === 'payment refused');
    expect(refusal).toMatchObject({ level: 30, code });
    expect(refusal?.['requestId']).toEqual(refused.headers.get('x-request-id'));
    const limited = lines.find((line) => line['msg'] === 'rate limited (429)');
    expect(limited).toMatchObject({ level: 30, method: 'GET', route: '/api/v1/fees/now' });
    for (const line of [refusal, limited]) expect(JSON.stringify(line)).not.toMatch(/"stack"|\bat /);
    // The unreachable facilitator was a warning at start, not a refusal.
    expect(lines.find((line) => String(line['msg']).startsWith('facilitator /supported'))).toMatchObject({
      level: 40,
    });
  });
});
