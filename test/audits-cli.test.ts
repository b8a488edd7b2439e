// The conformance CLI against real running servers: one gated by Tollbooth, one not.
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { AUDITS, type AuditResult, createAuditFixture } from '@tollbooth/conformance';
import { tollbooth } from '@tollbooth/express';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const CLI = new URL('../packages/conformance/src/cli.ts', import.meta.url).pathname;

function start(gated: boolean): Promise<Server> {
  const fixture = createAuditFixture();
  const app = express();
  if (gated) app.use(tollbooth(fixture.gate));
  for (const route of fixture.routes) {
    app.get(route.path, async (req, res) => {
      const answer = await fixture.handle(route.name, req.payment?.payer);
      res.status(answer.status).json(answer.body);
    });
  }
  const server = createServer(app);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function cli(server: Server, ...args: string[]): Promise<{ code: number; stdout: string }> {
  const { port } = server.address() as AddressInfo;
  const argv = ['--conditions=tollbooth-source', '--import', 'tsx', CLI, `http://127.0.0.1:${port}`, ...args];
  try {
    const { stdout } = await run(process.execPath, argv);
    return { code: 0, stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, stdout: failed.stdout };
  }
}

const PATHS = ['--paid', '/api/paid', '--free', '/api/free', '--paused', '/api/paused'];
let gated: Server;
let ungated: Server;

beforeAll(async () => {
  [gated, ungated] = await Promise.all([start(true), start(false)]);
});
afterAll(async () => {
  for (const server of [gated, ungated]) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

describe('tollbooth-conformance', () => {
  it('passes every audit that needs no control against a Tollbooth server and exits 0', async () => {
    const { code, stdout } = await cli(gated, ...PATHS, '--json');
    const results = JSON.parse(stdout) as AuditResult[];
    expect(code).toBe(0);
    expect(results).toHaveLength(AUDITS.length);
    const byStatus = (status: string) => results.filter((r) => r.status === status).map((r) => r.id);
    expect(byStatus('failed')).toEqual([]);
    const runnable = AUDITS.filter(
      (a) => a.needs === 'server' && !a.uses?.some((u) => u === 'retired' || u === 'canonical'),
    );
    expect(byStatus('passed')).toEqual(runnable.map((a) => a.id));
    expect(results.find((r) => r.id === 'AAVL-02')?.message).toBe('no retired path given');
  });

  it('reports the broken rules of a server without a gate and exits 1', async () => {
    const { code, stdout } = await cli(ungated, ...PATHS);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^FAIL A402-01 /m);
    expect(stdout).toMatch(/^FAIL AAVL-01 /m);
    expect(stdout).toMatch(/^skip ASET-01 /m);
  });

  it('exits 2 with the usage when no paid path is given', async () => {
    const { code } = await cli(gated);
    expect(code).toBe(2);
  });
});
