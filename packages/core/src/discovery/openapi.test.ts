import { describe, expect, it } from 'vitest';
import { compileRoutes } from '../routes/compile-routes';
import type { RoutesConfig } from '../routes/types';
import { createSimpleScheme, TEST_PAY_TO } from '../test-support/simple-scheme';
import { buildOpenApiDocument } from './openapi';

const accepts = { network: 'eip155:8453', payTo: TEST_PAY_TO, price: '$0.01', maxTimeoutSeconds: 300 };
const routes: RoutesConfig = {
  'GET /plain': { accepts },
  'GET /named': { accepts, paymentIdentifier: true },
  'POST /must-name': { accepts, paymentIdentifier: { required: true } },
  'GET /not-named': { accepts, paymentIdentifier: false },
};
const table = compileRoutes(routes, { schemes: [createSimpleScheme()], baseUrl: 'https://api.example.com' });

describe('x-payment-info of an OpenAPI operation', () => {
  it('says whether the route takes a payment identifier, and whether it must have one', () => {
    const document = buildOpenApiDocument(table, { table, baseUrl: 'https://api.example.com' });
    const info = (path: string, method: string) =>
      (document.paths[path]![method] as { 'x-payment-info': Record<string, unknown> })['x-payment-info'];
    expect(info('/named', 'get')['paymentIdentifier']).toEqual({ required: false });
    expect(info('/must-name', 'post')['paymentIdentifier']).toEqual({ required: true });
    expect(info('/plain', 'get')).not.toHaveProperty('paymentIdentifier');
    expect(info('/not-named', 'get')).not.toHaveProperty('paymentIdentifier');
  });
});
