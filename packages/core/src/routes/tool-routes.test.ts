import { describe, expect, it } from 'vitest';
import { currentTable } from '../discovery/route-view';
import { TollboothConfigError } from '../errors/config-error';
import { createSimpleScheme, TEST_PAY_TO } from '../test-support/simple-scheme';
import { compileRoutes, TOOL_METHOD } from './compile-routes';
import type { RoutesConfig } from './types';

const accepts = { network: 'eip155:8453', payTo: TEST_PAY_TO, price: '$0.01' };
const compile = (routes: RoutesConfig) =>
  compileRoutes(routes, { schemes: [createSimpleScheme()], baseUrl: 'https://api.example.com' });

// Tool routes (`TOOL /<name>`) are what @tollbooth/mcp sells a paid MCP tool under, in the same
// table (and so the same gate and ledger) as the HTTP routes.
describe('tool routes', () => {
  it('are matched by a tool call, with mcp://tool/<name> as their resource URL', () => {
    const table = compile({ 'TOOL /get_fees': { accepts } });
    const match = table.match(TOOL_METHOD, '/get_fees');
    expect(match?.route.key).toBe('TOOL /get_fees');
    expect(match?.resourceUrl).toBe('mcp://tool/get_fees');
    expect(table.get('TOOL /get_fees')?.resourceUrl()).toBe('mcp://tool/get_fees');
  });

  it('take a resource URL of their own', () => {
    const table = compile({
      'TOOL /get_fees': { accepts, resource: 'https://api.example.com/mcp#get_fees' },
    });
    expect(table.match(TOOL_METHOD, '/get_fees')?.resourceUrl).toBe('https://api.example.com/mcp#get_fees');
  });

  it('are never matched by an HTTP request, nor answer its other methods, nor shadow a price pattern', () => {
    const table = compile({ 'TOOL /api/x': { accepts }, 'GET /api/*': { accepts } });
    expect(table.match('GET', '/api/x')?.route.key).toBe('GET /api/*');
    expect(table.match('POST', '/api/x')).toBeUndefined();
    expect(table.methodsFor('/api/x')).toEqual(['GET', 'HEAD']);
    expect(compile({ 'TOOL /only_tool': { accepts } }).methodsFor('/only_tool')).toEqual([]);
  });

  it('never match an HTTP route, even one declared without a method', () => {
    const table = compile({ '/*': { accepts }, 'GET /get_fees': { accepts } });
    expect(table.match(TOOL_METHOD, '/get_fees')).toBeUndefined();
    expect(table.match(TOOL_METHOD, '/anything')).toBeUndefined();
  });

  it('are left out of what discovery documents', () => {
    const table = compile({ 'TOOL /get_fees': { accepts }, 'GET /api/fees': { accepts } });
    const view = currentTable(table);
    expect(view.routes.map((r) => r.key)).toEqual(['GET /api/fees']);
    expect(currentTable(table)).toBe(view);
    expect(view.baseUrl).toBe('https://api.example.com');
  });

  it.each([
    ['a tool name MCP does not allow', { 'TOOL /get!fees': { accepts } }, /tool name/],
    ['a param in the name', { 'TOOL /tool/:id': { accepts } }, /tool name/],
    ['a canonical rule', { 'TOOL /t': { accepts, canonical: true } }, /canonical/],
    ['a resource that is no URL', { 'TOOL /t': { accepts, resource: 'not a url' } }, /resource must be/],
    [
      'a resource on a pattern',
      { 'GET /a/*': { accepts, resource: 'https://x.example/a' } },
      /path must be exact/,
    ],
    [
      'acceptV1Payments that is no boolean',
      { 'TOOL /t': { accepts, acceptV1Payments: 'yes' as never } },
      /acceptV1Payments/,
    ],
  ])('refuse %s', (_name, routes, message) => {
    expect(() => compile(routes as RoutesConfig)).toThrow(TollboothConfigError);
    expect(() => compile(routes as RoutesConfig)).toThrow(message);
  });
});
