import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

// The lint rule that keeps the adapters on core's public entry points (biome.json,
// noRestrictedImports): a probe file in each adapter's src/ is linted as the repository lints it.

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
const biome = join(root, 'node_modules', '.bin', 'biome');
const probes: string[] = [];

afterAll(() => {
  for (const probe of probes) rmSync(probe, { force: true });
});

/** Lints `source` as a file of `packages/<adapter>/src/`; the diagnostics, or '' when it passes. */
async function lintInAdapter(adapter: string, source: string): Promise<string> {
  const probe = join(root, 'packages', adapter, 'src', `lint-probe-${process.pid}-${probes.length}.ts`);
  probes.push(probe);
  writeFileSync(probe, source);
  try {
    await run(biome, ['lint', '--max-diagnostics=20', probe], { cwd: root });
    return '';
  } catch (error) {
    const { stdout, stderr } = error as { stdout: string; stderr: string };
    return `${stdout}${stderr}`;
  } finally {
    rmSync(probe, { force: true });
  }
}

describe('adapters import core through its entry points only', () => {
  it.each(['express', 'fastify', 'koa', 'mcp'])('%s: a deep import of core fails lint', async (adapter) => {
    const output = await lintInAdapter(
      adapter,
      [
        "import { SettlementLedger } from '@tollbooth/core/src/ledger/settlement-ledger';",
        "import { createPaymentGate } from '../../core/src/gate/create-payment-gate';",
        "import { TollboothError } from '@tollbooth/core/dist/index.js';",
        'export const all = [SettlementLedger, createPaymentGate, TollboothError];',
        '',
      ].join('\n'),
    );
    expect(output.match(/lint\/style\/noRestrictedImports/g)).toHaveLength(3);
  });

  it.each(['express', 'fastify', 'koa', 'mcp'])('%s: the public entry points pass', async (adapter) => {
    const output = await lintInAdapter(
      adapter,
      [
        "import { createPaymentGate } from '@tollbooth/core';",
        "import { createDiscovery } from '@tollbooth/core/discovery';",
        "import { toRequestView } from '@tollbooth/core/node';",
        'export const all = [createPaymentGate, createDiscovery, toRequestView];',
        '',
      ].join('\n'),
    );
    expect(output).toBe('');
  });
});
