// `tollbooth-conformance mcp`: the MCP audit group from the command line. On the kit's devnet, the
// CLI starts the fee service itself (--exec, as docs/conformance.md shows) and every audit passes
// against its /mcp; on a chain of the caller's own (--rpc-url …) with the caller's fault proxy
// (--fault-proxy), a fee service without a chain reader fails AMCP-07 (the settlement whose answer
// was lost stays unresolved) and the CLI exits 1.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type AuditResult, type FaultKit, MCP_AUDITS, startFaultKit } from '@tollbooth/conformance';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../examples/fee-service/src/config';
import { type RunningFeeService, startFeeService } from '../examples/fee-service/src/service';
import { freePort, REPO_ROOT } from './support/fault-harness';

const run = promisify(execFile);
const CLI = join(REPO_ROOT, 'packages', 'conformance', 'src', 'cli.ts');
const MAIN = join(REPO_ROOT, 'examples', 'fee-service', 'src', 'main.ts');
const TOOL = 'get_fee_landscape';
const scratch = mkdtempSync(join(tmpdir(), 'conformance-mcp-cli-'));

interface Report {
  kind: string;
  tool: string;
  results: AuditResult[];
  exitCode: number;
}

async function cli(...args: string[]): Promise<{ code: number; report: Report; stderr: string }> {
  const argv = ['--conditions=tollbooth-source', '--import', 'tsx', CLI, 'mcp', ...args, '--json'];
  try {
    const { stdout, stderr } = await run(process.execPath, argv, { cwd: REPO_ROOT, maxBuffer: 1 << 24 });
    return { code: 0, report: JSON.parse(stdout) as Report, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    let report: Report;
    try {
      report = JSON.parse(failed.stdout) as Report;
    } catch {
      throw new Error(`tollbooth-conformance mcp exited ${failed.code} without a report:\n${failed.stderr}`);
    }
    return { code: failed.code, report, stderr: failed.stderr };
  }
}

const statuses = (report: Report) => report.results.map((r) => `${r.id} ${r.status}`);

describe('tollbooth-conformance mcp', () => {
  it('starts the kit and the fee service (--exec) and passes every MCP audit against its /mcp, exit 0', async () => {
    const port = await freePort();
    const env = [
      'FACILITATOR_URL=$TOLLBOOTH_FACILITATOR_URL',
      'RPC_URL=$TOLLBOOTH_RPC_URL',
      'NETWORK=$TOLLBOOTH_NETWORK',
      'ASSET=$TOLLBOOTH_TOKEN',
      'PAY_TO=$TOLLBOOTH_PAY_TO',
      `PORT=${port}`,
      `LEDGER_URL=sqlite:${join(scratch, 'exec.sqlite')}`,
      'LOG_LEVEL=warn',
      'OBSERVATORY_ENABLED=false',
      'SIMULATOR_HISTORY_HOURS=0',
      'RATE_LIMIT_ENABLED=false',
      'FACILITATOR_TIMEOUT_MS=1000',
      'FACILITATOR_SETTLE_TIMEOUT_MS=2000',
    ].join(' ');
    const exec = `${env} exec "${process.execPath}" --conditions=tollbooth-source --import tsx ${MAIN}`;
    const { code, report, stderr } = await cli(
      `http://127.0.0.1:${port}/mcp`,
      '--tool',
      TOOL,
      '--exec',
      exec,
      '--wait',
      '90',
      '--recovery',
      '15',
    );
    expect(statuses(report), stderr).toEqual(MCP_AUDITS.map((a) => `${a.id} passed`));
    expect(report).toMatchObject({ kind: 'mcp', tool: TOOL, exitCode: 0 });
    expect(code).toBe(0);
  }, 300_000);

  describe('on a chain of its own with its own fault proxy', () => {
    let kit: FaultKit;
    let service: RunningFeeService;

    beforeAll(async () => {
      kit = await startFaultKit();
      const { chain } = kit;
      // No RPC_URL: no chain reader to find the transfer of a settlement whose answer was lost.
      service = await startFeeService(
        loadConfig({
          PORT: '0',
          LOG_LEVEL: 'silent',
          LEDGER_URL: `sqlite:${join(scratch, 'own.sqlite')}`,
          OBSERVATORY_ENABLED: 'false',
          SIMULATOR_HISTORY_HOURS: '0',
          RATE_LIMIT_ENABLED: 'false',
          FACILITATOR_URL: kit.facilitatorUrl,
          FACILITATOR_TIMEOUT_MS: '1000',
          FACILITATOR_SETTLE_TIMEOUT_MS: '2000',
          NETWORK: `eip155:${chain.chainId}`,
          ASSET: chain.token.address,
          ASSET_NAME: chain.token.name,
          ASSET_VERSION: chain.token.version,
          PAY_TO: chain.payTo,
        }),
      );
    }, 120_000);
    afterAll(async () => {
      await service?.close();
      await kit?.stop();
      rmSync(scratch, { recursive: true, force: true });
    });

    const ownChain = () => [
      `${service.url}/mcp`,
      '--tool',
      TOOL,
      '--rpc-url',
      kit.chain.rpcUrl,
      '--asset',
      kit.chain.token.address,
      '--payer-key',
      kit.chain.payers[0]!,
    ];

    it('fails AMCP-07 against a fee service without a chain reader, driving the fault proxy it is given, exit 1', async () => {
      const { code, report, stderr } = await cli(
        ...ownChain(),
        '--fault-proxy',
        kit.facilitatorUrl,
        '--recovery',
        '3',
      );
      expect(statuses(report), stderr).toEqual(
        MCP_AUDITS.map((a) => `${a.id} ${a.id === 'AMCP-07' ? 'failed' : 'passed'}`),
      );
      expect(report.results.find((r) => r.id === 'AMCP-07')?.message).toMatch(/the retried payload/);
      expect(code).toBe(1);
    }, 180_000);

    it('skips AMCP-07 without --fault-proxy, and runs only the transport rules with --profile x402', async () => {
      const { code, report } = await cli(...ownChain(), '--profile', 'x402');
      expect(statuses(report)).toEqual(
        MCP_AUDITS.filter((a) => a.profile === 'x402').map((a) => `${a.id} passed`),
      );
      expect(code).toBe(0);
      const all = await cli(...ownChain());
      expect(all.report.results.find((r) => r.id === 'AMCP-07')?.status).toBe('skipped');
    }, 180_000);

    it('exits 2 with the problems when the tool is missing or the chain options are mixed', async () => {
      const argv = ['--conditions=tollbooth-source', '--import', 'tsx', CLI, 'mcp', `${service.url}/mcp`];
      const failed = await run(
        process.execPath,
        [...argv, '--token', 'circle', '--rpc-url', kit.chain.rpcUrl],
        {
          cwd: REPO_ROOT,
        },
      ).catch((error: { code: number; stderr: string }) => error);
      expect(failed).toMatchObject({ code: 2 });
      expect((failed as { stderr: string }).stderr).toContain('--tool <name> is required');
      expect((failed as { stderr: string }).stderr).toContain('--rpc-url needs --asset');
      expect((failed as { stderr: string }).stderr).toContain("--token is for the kit's devnet");
    });
  });
});
