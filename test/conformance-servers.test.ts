// GitHub issue 22, part 4: the server audits judge any x402 server fairly. The fee service (its
// canonical paid route included) keeps the x402 rules and the Tollbooth profile; a server built
// with the official @x402/express keeps every x402 rule; a rate limiter is waited out or reported
// as such, never as a broken rule; an unreachable target is one line and exit status 2.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AUDITS, type AuditPaths, type AuditResult, auditsOf, runAudits } from '@tollbooth/conformance';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { createExactEvmFacilitator } from '@tollbooth/evm';
import { type RunningFacilitatorServer, startFacilitatorServer } from '@tollbooth/facilitator';
import { HTTPFacilitatorClient, x402ResourceServer } from '@x402/core/server';
import { ExactEvmScheme as OfficialExactEvmServer } from '@x402/evm/exact/server';
import { paymentMiddleware } from '@x402/express';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../examples/fee-service/src/config';
import { type RunningFeeService, startFeeService } from '../examples/fee-service/src/service';
import { type Listening, listen } from './support/interop-harness';

const run = promisify(execFile);
const CLI = new URL('../packages/conformance/src/cli.ts', import.meta.url).pathname;
const scratch = mkdtempSync(join(tmpdir(), 'conformance-servers-'));

/** Runs the real CLI; resolves with its exit status and output. */
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [
      '--conditions=tollbooth-source',
      '--import',
      'tsx',
      CLI,
      ...args,
    ]);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const byStatus = (results: readonly AuditResult[], status: AuditResult['status']) =>
  results.filter((r) => r.status === status).map((r) => r.id);
const serverAudits = (profile: 'x402' | 'tollbooth') => auditsOf(profile).filter((a) => a.needs === 'server');

let devnet: Devnet;
const services: RunningFeeService[] = [];
let counter = 0;

async function feeService(env: Record<string, string>): Promise<RunningFeeService> {
  counter += 1;
  const service = await startFeeService(
    loadConfig({
      PORT: '0',
      LOG_LEVEL: 'silent',
      LEDGER_URL: `sqlite:${join(scratch, `ledger-${counter}.sqlite`)}`,
      // The audits judge the payment edge: no fee history to record first.
      OBSERVATORY_ENABLED: 'false',
      SIMULATOR_HISTORY_HOURS: '0',
      ...env,
    }),
    { devnet },
  );
  services.push(service);
  return service;
}

beforeAll(async () => {
  devnet = await startDevnet({ chainId: 8453, payers: 1 });
});
afterAll(async () => {
  await Promise.all(services.map((s) => s.close()));
  await devnet?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

const FEE_PATHS: AuditPaths = {
  paid: '/api/v1/fees/now',
  canonical: '/api/v1/fees/now',
  free: '/api/v1/fees/preview',
};

describe('the server audits against the fee service', () => {
  it('keep every x402 rule and the Tollbooth profile on the canonical paid decision (the documented command)', async () => {
    const service = await feeService({ RATE_LIMIT_ENABLED: 'false' });
    const { code, stdout } = await cli(
      service.url,
      '--paid',
      FEE_PATHS.paid,
      '--canonical',
      FEE_PATHS.canonical!,
      '--free',
      FEE_PATHS.free!,
      '--profile',
      'tollbooth',
      '--json',
    );
    const report = JSON.parse(stdout) as { results: AuditResult[]; exitCode: number };
    expect(byStatus(report.results, 'failed')).toEqual([]);
    expect(code).toBe(0);
    expect(report.exitCode).toBe(0);
    // The canonical route refuses a query string with 400, which keeps the x402 rule A402-07.
    expect(byStatus(report.results, 'passed')).toEqual(
      expect.arrayContaining(['A402-07', 'AAVL-03', 'ADEC-10', 'APATH-08', 'ACORS-01']),
    );
    expect(byStatus(report.results, 'skipped').sort()).toEqual(['AAVL-01', 'AAVL-02']);
  });

  it('keep the availability rule in the production profile (the decision paused: 503, no challenge)', async () => {
    const service = await feeService({ RATE_LIMIT_ENABLED: 'false', PROFILE: 'production' });
    const results = await runAudits(
      { url: service.url, paths: { paid: FEE_PATHS.paid, paused: FEE_PATHS.paid } },
      { audits: AUDITS.filter((a) => a.id === 'AAVL-01') },
    );
    expect(results.map((r) => `${r.id} ${r.status} ${r.message ?? ''}`.trim())).toEqual(['AAVL-01 passed']);
  });

  it('wait out the rate limiter (Retry-After) instead of reporting its 429s as broken rules', async () => {
    const service = await feeService({ RATE_LIMIT_MAX: '15', RATE_LIMIT_WINDOW_MS: '1000' });
    const waits: number[] = [];
    const results = await runAudits(
      { url: service.url, paths: FEE_PATHS },
      { audits: serverAudits('tollbooth'), rateLimitWaitMs: 10_000, onRateLimitWait: (ms) => waits.push(ms) },
    );
    expect(waits.length).toBeGreaterThan(0);
    expect(results.filter((r) => r.status !== 'passed' && r.status !== 'skipped')).toEqual([]);
  });

  it('report a rate limiter it may not wait for as rate limited (exit status 2), never as a failure', async () => {
    const service = await feeService({ RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000' });
    const { code, stdout, stderr } = await cli(
      service.url,
      '--paid',
      FEE_PATHS.paid,
      '--rate-limit-wait',
      '0',
    );
    expect(stdout).toMatch(/^ {2}429 {2}\S+ +MUST /m);
    expect(stdout).toMatch(/answered 429 \(rate limited\)/);
    expect(stdout).not.toMatch(/FAIL/);
    expect(stdout).toMatch(/\d+ rate limited: \d+ MUST rules could not be judged$/m);
    expect(stderr).toBe('');
    expect(code).toBe(2);
  });
});

describe('the server audits against a server built with the official @x402/express', () => {
  let facilitator: RunningFacilitatorServer;
  let official: Listening;
  beforeAll(async () => {
    // The official middleware logs every undecodable payment header with console.error.
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    facilitator = await startFacilitatorServer({
      facilitator: createExactEvmFacilitator(devnet.facilitatorOptions),
    });
    const resourceServer = new x402ResourceServer(
      new HTTPFacilitatorClient({ url: facilitator.url }),
    ).register('eip155:8453', new OfficialExactEvmServer());
    const app = express();
    app.use(
      paymentMiddleware(
        {
          'GET /paid': {
            accepts: {
              scheme: 'exact',
              network: 'eip155:8453',
              payTo: devnet.accounts.payTo.address,
              price: {
                amount: '1000',
                asset: devnet.token.address,
                extra: { name: devnet.token.name, version: devnet.token.version },
              },
            },
            description: 'a paid resource',
          },
        },
        resourceServer,
      ),
    );
    app.get('/paid', (_req, res) => void res.json({ paid: true }));
    app.get('/free', (_req, res) => void res.json({ free: true }));
    official = await listen(app);
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    await official?.close();
    await facilitator?.close();
  });

  it('keep every x402 MUST (exit status 0) and miss only the SHOULD of a 400 for a malformed payment', async () => {
    const junit = join(scratch, 'official.xml');
    const { code, stdout } = await cli(official.url, '--paid', '/paid', '--free', '/free', '--junit', junit);
    // The HTTP transport's error table answers a malformed payment 400; @x402/express 2.27 answers 402.
    expect(stdout.match(/^ {2}FAIL \S+/gm)).toEqual(['  FAIL ADEC-16']);
    expect(stdout).toMatch(/1 failed, 0 skipped: every MUST rule that applies is kept$/m);
    expect(code).toBe(0);
    const xml = readFileSync(junit, 'utf8');
    expect(xml).toMatch(
      /<testsuites name="tollbooth-conformance server" tests="\d+" failures="1" errors="0"/,
    );
    expect(xml).toContain('name="A402-07 MUST NOT serve a paid route unpaid');
  });

  it('break the Tollbooth profile only where it goes beyond x402 (error codes, body, HEAD, CORS, the 400)', async () => {
    const results = await runAudits(
      { url: official.url, paths: { paid: '/paid', free: '/free' } },
      { audits: serverAudits('tollbooth') },
    );
    const failed = results.filter((r) => r.status === 'failed');
    expect(failed.filter((r) => r.profile === 'x402').map((r) => r.id)).toEqual(['ADEC-16']);
    expect(failed.map((r) => r.id).sort()).toEqual([
      'A402-02',
      'A402-05',
      'ACORS-01',
      'ADEC-01',
      'ADEC-02',
      'ADEC-03',
      'ADEC-04',
      'ADEC-05',
      'ADEC-09',
      'ADEC-16',
      'ADEC-17',
      'ADEC-18',
    ]);
  });
});

describe('an unreachable target', () => {
  it('is one line on stderr and exit status 2: no stack trace, no result', async () => {
    const closed = await listen(express());
    const url = closed.url;
    await closed.close();
    const { code, stdout, stderr } = await cli(url, '--paid', '/paid');
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toEqual([`tollbooth-conformance: cannot reach ${url}: ECONNREFUSED`]);
  });

  it('is one line for a facilitator too', async () => {
    const closed = await listen(express());
    const url = closed.url;
    await closed.close();
    const { code, stdout, stderr } = await cli('facilitator', url, '--wait', '0');
    expect(code).toBe(2);
    expect(stdout).not.toMatch(/^ {2}(ok|FAIL) /m);
    expect(stderr.trim().split('\n')).toEqual([
      `tollbooth-conformance: cannot audit: ${url}/supported: connect ECONNREFUSED ${url.slice('http://'.length)}`,
    ]);
  });
});

it('lists every audit the CLI can run against a server in the x402 or Tollbooth profile', () => {
  expect(serverAudits('tollbooth').length).toBe(AUDITS.filter((a) => a.needs === 'server').length);
});
