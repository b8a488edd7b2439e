// The Redis store of the edge rate limit: two instances of the service share one budget, on
// every mount, against the real Redis server.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningFeeService } from '../src/service';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';
import { FRAMEWORKS, removeScratch, startTestService } from './support/harness';

const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const prefix = `fee-service-test:${randomUUID()}:`;
let simulator: MempoolSimulator;

beforeAll(async () => {
  simulator = await startMempoolSimulator({ seed: 5 });
});

afterAll(async () => {
  await simulator?.close();
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
  removeScratch();
});

describe.each(FRAMEWORKS)('on %s', (framework) => {
  let instances: RunningFeeService[] = [];

  beforeAll(async () => {
    const env = {
      FRAMEWORK: framework,
      RATE_LIMIT_MAX: '3',
      RATE_LIMIT_REDIS_URL: REDIS_URL,
      RATE_LIMIT_PREFIX: prefix,
      // The unpaid challenge needs no facilitator call.
      FACILITATOR_URL: 'http://127.0.0.1:9',
      PAY_TO: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC',
    };
    instances = await Promise.all([
      startTestService(env, { simulator }),
      startTestService(env, { simulator }),
    ]);
  });

  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.close()));
  });

  it('shares one budget across instances and answers 429 with an empty body past it', async () => {
    const [a, b] = instances as [RunningFeeService, RunningFeeService];
    const statuses: number[] = [];
    let body = 'unread';
    for (const instance of [a, b, a, b]) {
      const response = await fetch(`${instance.url}/api/v1/fees/now`);
      statuses.push(response.status);
      body = await response.text();
    }
    expect(statuses).toEqual([402, 402, 402, 429]);
    expect(body).toBe('');
  });
});
