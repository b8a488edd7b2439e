import { describe, expect, it } from 'vitest';
import { CatalogQueryError, createResourceCatalog, parseCatalogQuery } from './catalog';
import { priceUsdOf, toTemplatePath } from './route-view';

describe('parseCatalogQuery', () => {
  it.each([
    [{}, { limit: 100, offset: 0 }],
    [
      { limit: '7', offset: '3' },
      { limit: 7, offset: 3 },
    ],
    [
      { limit: 1000, offset: 0 },
      { limit: 1000, offset: 0 },
    ],
    [{ limit: '007' }, { limit: 7, offset: 0 }],
  ])('reads %j as %j', (query, expected) => {
    expect(parseCatalogQuery(query)).toEqual(expected);
  });

  it.each([
    { limit: 0 },
    { limit: 1001 },
    { limit: 2.5 },
    { limit: -1 },
    { limit: Number.NaN },
    { limit: '' },
    { limit: ' 1' },
    { offset: -1 },
    { offset: '1.0' },
    { offset: '12345678901234567' },
  ])('refuses %j with invalid_pagination', (query) => {
    expect(() => parseCatalogQuery(query)).toThrow(CatalogQueryError);
    try {
      parseCatalogQuery(query);
    } catch (error) {
      expect((error as CatalogQueryError).code).toBe('invalid_pagination');
      expect((error as CatalogQueryError).status).toBe(400);
    }
  });
});

describe('createResourceCatalog', () => {
  it('reports every configuration problem at once', () => {
    expect(() => createResourceCatalog({ table: { routes: [] }, facilitatorUrl: '' } as never)).toThrow(
      /facilitatorUrl.*baseUrl|baseUrl.*facilitatorUrl/s,
    );
  });

  it('takes the base URL of the table when none is given', () => {
    const catalog = createResourceCatalog({
      table: { routes: [], baseUrl: 'https://api.example.com/' },
      facilitatorUrl: 'https://f.example.com',
    });
    expect(catalog.list()).toEqual({
      x402Version: 2,
      items: [],
      pagination: { limit: 100, offset: 0, total: 0 },
    });
  });
});

describe('route facts', () => {
  it('writes path parameters as a URI template', () => {
    expect(toTemplatePath('/tx/:txid/out/:n')).toBe('/tx/{txid}/out/{n}');
  });

  it.each([
    ['$0.010', '0.01'],
    [0.005, '0.005'],
    ['1', '1'],
  ])('reads the declared price %j as priceUsd %j', (price, expected) => {
    const route = {
      key: 'GET /x',
      method: 'GET',
      path: '/x',
      isPattern: false,
      config: { accepts: { network: 'eip155:8453', payTo: '0x1', price } },
      requirements: [],
    };
    expect(priceUsdOf(route)).toBe(expected);
  });

  it('reads an explicit USDC amount as USD and leaves an unknown asset without priceUsd', () => {
    const requirement = {
      scheme: 'exact',
      network: 'eip155:8453',
      amount: '2500',
      asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      payTo: '0x1',
      maxTimeoutSeconds: 60,
    };
    const route = (asset: string) => ({
      key: 'GET /x',
      method: 'GET',
      path: '/x',
      isPattern: false,
      config: { accepts: { network: 'eip155:8453', payTo: '0x1', price: { amount: '2500', asset } } },
      requirements: [{ ...requirement, asset }],
    });
    expect(priceUsdOf(route(requirement.asset))).toBe('0.0025');
    expect(priceUsdOf(route('0x0000000000000000000000000000000000000009'))).toBeUndefined();
  });
});
