import { describe, expect, it } from 'vitest';
import { compileRoutes } from '../routes/compile-routes';
import type { RoutesConfig } from '../routes/types';
import { createSimpleScheme, TEST_PAY_TO } from '../test-support/simple-scheme';
import { createResourceCatalog } from './catalog';
import { buildWellKnownDocument } from './well-known';

const option = (price: string) => ({
  network: 'eip155:8453',
  payTo: TEST_PAY_TO,
  price,
  maxTimeoutSeconds: 300,
});
const routes: RoutesConfig = {
  'GET /api/v1/ai/chat': { accepts: option('$0.01'), description: 'chat' },
  'GET /api/v1/analyst': { accepts: option('$0.05'), description: 'analyst', discovery: { listed: false } },
  'GET /api/v1/analyst*': { accepts: option('$0.05'), description: 'Multi-step AI analyst' },
};
const table = compileRoutes(routes, { schemes: [createSimpleScheme()], baseUrl: 'https://api.example.com/' });

describe('an unlisted paid route', () => {
  it('is left out of the catalog', () => {
    const catalog = createResourceCatalog({ table, facilitatorUrl: 'https://f.example.com' });
    expect(catalog.list().items.map((item) => item.resource)).toEqual([
      'https://api.example.com/api/v1/ai/chat',
    ]);
  });

  it('is left out of the well-known resources while its price pattern stays listed', () => {
    const document = buildWellKnownDocument(table, {
      table,
      baseUrl: 'https://api.example.com/',
      facilitatorUrl: 'https://f.example.com',
    });
    expect(document.resources).toEqual(['https://api.example.com/api/v1/ai/chat']);
    expect(document.paidEndpoints.map((e) => [e.pattern, e.priceUsd, e.resources])).toContainEqual([
      '/api/v1/analyst*',
      '0.05',
      [],
    ]);
  });
});
