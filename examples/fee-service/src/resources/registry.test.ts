import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { routeKey } from './kit';
import { buildErrorCatalog } from './publish';
import { PRICE_PATTERNS, RESOURCES } from './registry';

const contract = readFileSync(join(import.meta.dirname, '../../../../docs/fee-service-contract.md'), 'utf8');

describe('the resource registry', () => {
  it('lists each route once', () => {
    const keys = RESOURCES.map(routeKey);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('declares every error code once, and the contract documents each of them', () => {
    const catalog = buildErrorCatalog(RESOURCES);
    const undocumented = catalog
      .filter((entry) => !contract.includes(`\`${entry.code}\``))
      .map((e) => e.code);
    expect(undocumented).toEqual([]);
  });

  it('documents every resource and price pattern in the contract', () => {
    for (const resource of RESOURCES) {
      expect(contract, resource.path).toContain(resource.path.replace(/:([a-z_]+)/g, '{$1}'));
    }
    for (const pattern of PRICE_PATTERNS) expect(contract).toContain(`\`${pattern.path}\``);
  });
});
