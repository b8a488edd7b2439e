import { validateDiscoveryExtension } from '@x402/extensions/bazaar';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import type { RouteConfig } from '../routes/types';
import { addBazaarExtensions, createBazaarExtension, toHeaderBazaarExtension } from './bazaar';
import type { DiscoverableRoute } from './route-view';

function route(key: string, config: Partial<RouteConfig> = {}): DiscoverableRoute {
  const [method, path] = key.split(' ') as [string, string];
  return {
    key,
    method,
    path,
    isPattern: path.includes('*'),
    config: { accepts: { network: 'eip155:8453', payTo: '0xabc', price: '$0.01' }, ...config },
    requirements: [],
  };
}

describe('createBazaarExtension', () => {
  it('leaves a required parameter without an example out of info and out of required, but keeps it described', () => {
    const extension = createBazaarExtension(
      route('GET /search', {
        discovery: {
          input: {
            queryParams: z.object({
              id: z
                .string()
                .regex(/^[0-9a-f]{8}$/)
                .describe('an id'),
              page: z.coerce.number().int().min(1).describe('page'),
            }),
          },
        },
      }),
    );
    expect(extension.info.input.queryParams).toEqual({ page: 1 });
    const properties = extension.schema.properties as Record<string, { properties: Record<string, unknown> }>;
    expect(properties.input!.properties.queryParams).toEqual({
      type: 'object',
      properties: {
        id: { type: 'string', pattern: '^[0-9a-f]{8}$', description: 'an id' },
        page: expect.objectContaining({ type: 'integer', minimum: 1, description: 'page' }),
      },
      required: ['page'],
    });
  });

  it('drops a made-up example that the zod schema refuses', () => {
    const extension = createBazaarExtension(
      route('GET /x', {
        discovery: {
          input: {
            queryParams: z.object({ word: z.string().refine((v) => v.startsWith('a'), 'must start with a') }),
          },
        },
      }),
    );
    expect(extension.info.input.queryParams).toEqual({});
  });

  it('fixes the method and documents the 200 body under output', () => {
    const output = z.object({ ok: z.boolean() }).meta({ examples: [{ ok: true }] });
    const extension = createBazaarExtension(route('DELETE /thing', { discovery: { output } }));
    expect(extension.info).toEqual({
      input: { type: 'http', method: 'DELETE' },
      output: { type: 'json', example: { ok: true } },
    });
    const properties = extension.schema.properties as Record<string, { properties: Record<string, unknown> }>;
    expect(properties.input!.properties.method).toEqual({ type: 'string', enum: ['DELETE'] });
    expect(properties.output!.properties.example).toEqual(
      expect.objectContaining({ type: 'object', properties: { ok: { type: 'boolean' } } }),
    );
    expect(extension.routeTemplate).toBeUndefined();
  });

  it('gives a body method an empty JSON body when no body schema is declared', () => {
    const extension = createBazaarExtension(route('POST /submit'));
    expect(extension.info.input).toEqual({ type: 'http', method: 'POST', bodyType: 'json', body: {} });
  });

  it('uses the request method for a route declared for any method', () => {
    const extension = createBazaarExtension(route('* /any'), { method: 'put' });
    expect(extension.info.input.method).toBe('PUT');
  });

  it('documents path parameters the schema does not describe as required strings', () => {
    const extension = createBazaarExtension(route('GET /a/:x/b/:y'));
    expect(extension.routeTemplate).toBe('/a/:x/b/:y');
    expect(extension.info.input.pathParams).toEqual({ x: 'x', y: 'x' });
  });

  it('rejects path parameter descriptions for segments the path does not have', () => {
    expect(() =>
      createBazaarExtension(
        route('GET /a/:x', {
          discovery: { input: { pathParams: z.object({ x: z.string(), nope: z.string() }) } },
        }),
      ),
    ).toThrow(/nope/);
  });
});

describe('toHeaderBazaarExtension', () => {
  const output = z
    .object({ rates: z.array(z.object({ target: z.number().int(), fee: z.number().describe('sat/vB') })) })
    .meta({ examples: [{ rates: [{ target: 1, fee: 12.5 }] }] });
  const full = createBazaarExtension(
    route('GET /tx/:txid', {
      discovery: { input: { queryParams: z.object({ verbose: z.boolean().default(false) }) }, output },
    }),
  );

  it('keeps the input and its schema and reduces the output to its type', () => {
    const header = toHeaderBazaarExtension(full);
    expect(header.info).toEqual({ input: full.info.input, output: { type: 'json' } });
    const properties = header.schema.properties as Record<string, unknown>;
    expect(properties['input']).toEqual((full.schema.properties as Record<string, unknown>)['input']);
    expect(properties['output']).toEqual({
      type: 'object',
      properties: { type: { type: 'string' } },
      required: ['type'],
    });
    expect(header.routeTemplate).toBe('/tx/:txid');
    expect(JSON.stringify(header).length).toBeLessThan(JSON.stringify(full).length);
  });

  it('leaves out the pattern of a string that names its format, in the header form only', () => {
    const dated = createBazaarExtension(
      route('GET /history', {
        discovery: {
          input: {
            queryParams: z.object({
              since: z.iso.datetime().describe('From'),
              cursor: z.string().regex(/^[a-z]+$/),
            }),
          },
        },
      }),
    );
    const params = (extension: typeof dated) =>
      (
        extension.schema.properties as Record<
          string,
          { properties: Record<string, { properties: Record<string, Record<string, unknown>> }> }
        >
      )['input']!.properties['queryParams']!.properties;
    expect(params(dated)['since']).toMatchObject({ format: 'date-time', pattern: expect.any(String) });
    const header = params(toHeaderBazaarExtension(dated));
    expect(header['since']).toEqual({ type: 'string', format: 'date-time', description: 'From' });
    // A pattern without a format is the only statement of its rule: kept.
    expect(header['cursor']).toEqual(params(dated)['cursor']);
    expect(validateDiscoveryExtension(toHeaderBazaarExtension(dated) as never)).toEqual({ valid: true });
  });

  it('stays valid against its own schema, as the official validator checks what clients echo', () => {
    expect(validateDiscoveryExtension(full as never)).toEqual({ valid: true });
    expect(validateDiscoveryExtension(toHeaderBazaarExtension(full) as never)).toEqual({ valid: true });
  });

  it('is what addBazaarExtensions puts in headerExtensions, beside the whole extension', () => {
    const routes = addBazaarExtensions({
      'GET /report': { accepts: route('GET /report').config.accepts, discovery: { output } },
      'GET /any/*': { accepts: route('GET /any/*').config.accepts },
    });
    const bazaar = routes['GET /report']!.extensions!['bazaar'] as ReturnType<typeof createBazaarExtension>;
    expect(bazaar.info.output.example).toEqual({ rates: [{ target: 1, fee: 12.5 }] });
    expect(routes['GET /report']!.headerExtensions).toEqual({ bazaar: toHeaderBazaarExtension(bazaar) });
    expect(routes['GET /any/*']!.headerExtensions).toBeUndefined();
  });
});
