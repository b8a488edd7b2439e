import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type AnyResource, routeKey } from './kit';
import { buildErrorCatalog } from './publish';
import { PRICE_PATTERNS, RESOURCES } from './registry';

const SRC = join(import.meta.dirname, '..');

/** Every file under a folder, by path relative to `src/`. */
function filesUnder(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(SRC, join(entry.parentPath, entry.name)));
}

/** Whether a module export is a resource declaration (`defineResource`'s result). */
function isDeclaration(value: unknown): value is AnyResource {
  const candidate = value as Partial<AnyResource> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.method === 'string' &&
    typeof candidate.path === 'string' &&
    typeof candidate.discovery === 'object' &&
    typeof candidate.errors === 'object' &&
    Array.isArray(candidate.needs)
  );
}

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

  it('has one declaration in each resource folder, each listed once: a resource is its folder and one line', async () => {
    const files = filesUnder(import.meta.dirname).filter((file) => file.endsWith('/resource.ts'));
    const declared: AnyResource[] = [];
    for (const file of files) {
      const module = (await import(join(SRC, file))) as Record<string, unknown>;
      const declarations = Object.values(module).filter(isDeclaration);
      expect(declarations, file).toHaveLength(1);
      declared.push(declarations[0]!);
    }
    for (const [index, declaration] of declared.entries()) {
      expect(RESOURCES.filter((listed) => listed === declaration).length, files[index]).toBe(1);
    }
    expect(RESOURCES).toHaveLength(files.length);
    expect(RESOURCES.filter((resource) => resource.demo).length).toBeLessThanOrEqual(1);
  });

  it('names no resource outside src/resources/: the service is built from the registry alone', () => {
    const importsADeclaration = /from '[^']*\/resources\/[^']*\/resource'/;
    const naming = filesUnder(SRC)
      .filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts') && !file.startsWith('resources/'))
      .filter((file) => importsADeclaration.test(readFileSync(join(SRC, file), 'utf8')));
    expect(naming).toEqual([]);
  });
});
