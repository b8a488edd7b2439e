// The conformance CLI against real running servers: one gated by Tollbooth, one not.
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { AUDITS, type AuditResult, auditsOf, createAuditFixture } from '@tollbooth/conformance';
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
    const { code, stdout } = await cli(gated, ...PATHS, '--profile', 'tollbooth', '--json');
    const { results, exitCode } = JSON.parse(stdout) as { results: AuditResult[]; exitCode: number };
    expect(code).toBe(0);
    expect(exitCode).toBe(0);
    const byStatus = (status: string) => results.filter((r) => r.status === status).map((r) => r.id);
    expect(byStatus('failed')).toEqual([]);
    const serverAudits = auditsOf('tollbooth').filter((a) => a.needs === 'server');
    expect(results.map((r) => r.id)).toEqual(serverAudits.map((a) => a.id));
    const runnable = serverAudits.filter((a) => !a.uses?.some((u) => u === 'retired' || u === 'canonical'));
    expect(byStatus('passed')).toEqual(runnable.map((a) => a.id));
    expect(results.find((r) => r.id === 'AAVL-02')?.message).toBe('no retired path given');
  });

  it('runs only the x402 rules by default', async () => {
    const { stdout } = await cli(gated, ...PATHS, '--json');
    const { results } = JSON.parse(stdout) as { results: AuditResult[] };
    expect(results.map((r) => r.profile)).toEqual(results.map(() => 'x402'));
    expect(results.length).toBe(AUDITS.filter((a) => a.profile === 'x402' && a.needs === 'server').length);
  });

  it('reports the broken rules of a server without a gate and exits 1', async () => {
    const { code, stdout } = await cli(ungated, ...PATHS, '--profile', 'tollbooth');
    expect(code).toBe(1);
    expect(stdout).toMatch(/^ {2}FAIL A402-01 /m);
    expect(stdout).toMatch(/^ {2}FAIL AAVL-01 /m);
    expect(stdout).not.toMatch(/ASET-01/);
  });

  it('exits 2 with the usage when no paid path is given', async () => {
    const { code } = await cli(gated);
    expect(code).toBe(2);
  });
});
