import { describe, expect, it } from 'vitest';
import type { Publication } from '../resources/publish';
import { RESOURCES } from '../resources/registry';
import { dashboardResources } from './data';

describe('dashboardResources', () => {
  const publications: Publication[] = RESOURCES.map((resource, i) => ({
    resource,
    key: `${resource.method} ${resource.path}`,
    // one paused resource, to see it listed without a link
    ...(i === 2
      ? { availability: 'paused' as const, reason: 'not built yet' }
      : { availability: 'active' as const }),
  }));
  const listed = dashboardResources(publications, 'http://127.0.0.1:3000/');

  it('lists every resource of the registry with its price in USDC from its declaration', () => {
    expect(listed).toHaveLength(RESOURCES.length);
    const decision = listed.find((r) => r.path === '/api/v1/fees/now')!;
    expect(decision).toMatchObject({
      method: 'GET',
      price: '0.001 USDC',
      href: 'http://127.0.0.1:3000/api/v1/fees/now',
    });
    expect(listed.find((r) => r.path === '/api/v1/fees/preview')!.price).toBeNull();
  });

  it('links only what a browser can open: active GET resources with no path parameter and no required query', () => {
    for (const r of listed.filter(
      (r) => r.method !== 'GET' || r.path.includes(':') || r.availability !== 'active',
    )) {
      expect(r.href, `${r.method} ${r.path}`).toBeUndefined();
    }
    // the chat takes its question in a required query parameter
    expect(listed.find((r) => r.path === '/api/v1/ai/chat')).toMatchObject({
      method: 'GET',
      availability: 'active',
    });
    expect(listed.find((r) => r.path === '/api/v1/ai/chat')!.href).toBeUndefined();
    // the advice's parameters are all optional
    expect(listed.find((r) => r.path === '/api/v1/ai/fees/advice')!.href).toBe(
      'http://127.0.0.1:3000/api/v1/ai/fees/advice',
    );
    expect(listed[2]).toMatchObject({ availability: 'paused', reason: 'not built yet' });
    expect(listed.some((r) => r.method === 'POST')).toBe(true);
  });
});
