import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { parsedInputOf, readRequestBody } from '../http/body';
import type { RouteContext } from '../http/types';
import { defineResource, routeKey } from './kit';
import { buildResourceRoutes, buildRoutesConfig, type Publication } from './publish';
import { buildTestEnvironment, TEST_TERMS } from './testing';

describe('a paid request’s input', () => {
  it('is validated and its body read once: the precondition hands what it parsed to the handler', async () => {
    let parses = 0;
    const resource = defineResource({
      method: 'POST',
      path: '/api/v1/test/double',
      description: 'Doubles a number',
      price: { amount: '1000', maxTimeoutSeconds: 60 },
      discovery: { category: 'test', keywords: ['test'], operationId: 'double' },
      input: {
        body: z.strictObject({
          n: z.number().refine(() => {
            parses += 1;
            return true;
          }),
        }),
      },
      output: z.strictObject({ doubled: z.number() }),
      errors: {},
      needs: [],
      handler: ({ input }) => ({ status: 200, body: { doubled: input.body.n * 2 } }),
    });
    const env = buildTestEnvironment();
    const publications: Publication[] = [{ resource, key: routeKey(resource), availability: 'active' }];
    const precondition = buildRoutesConfig(publications, [], env, TEST_TERMS)[routeKey(resource)]!
      .precondition!;
    const [route] = buildResourceRoutes(publications, env);
    // Publishing may run the schema (the bazaar extension's example); count the request's parses only.
    parses = 0;

    const req = new IncomingMessage(new Socket());
    req.push(JSON.stringify({ n: 21 }));
    req.push(null);
    const early = await precondition(
      { method: 'POST', header: () => undefined, raw: req } as never,
      { params: {}, target: { path: resource.path, query: '' } } as never,
    );
    expect(early).toBeUndefined();
    expect(parses).toBe(1);

    let bodyReads = 0;
    const context: RouteContext = {
      method: 'POST',
      url: new URL(`http://127.0.0.1${resource.path}`),
      target: resource.path,
      params: {},
      header: () => undefined,
      requestId: 'req-1',
      payment: undefined,
      readBody: () => {
        bodyReads += 1;
        return readRequestBody(req);
      },
      parsedInput: () => parsedInputOf(req),
    };
    expect(await route!.handler(context)).toEqual({ status: 200, body: { doubled: 42 } });
    expect({ parses, bodyReads }).toEqual({ parses: 1, bodyReads: 0 });
  });
});
