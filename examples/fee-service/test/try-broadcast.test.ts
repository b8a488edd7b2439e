// The README's "Try the broadcast", run as written: `npm start` with its simulator, devnet and
// facilitator on pinned ports (SIMULATOR_PORT, DEVNET_PORT, FACILITATOR_PORT), `npm run test-tx`
// printing a transaction the simulator's node accepts, and `tollbooth-pay` paying the broadcast of
// it with the devnet payer key the README gives. A pinned port already taken is one line naming
// its variable.
import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startMain } from './support/main-process';

const root = join(import.meta.dirname, '..', '..', '..');
const children: ChildProcess[] = [];
const held: Server[] = [];
/** Anvil's account 3, npm start's first devnet payer (the README prints it). */
const PAYER_KEY = '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6';

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await Promise.all(held.map((server) => new Promise((resolve) => server.close(resolve))));
});

/** Free loopback ports, distinct (held while chosen, then released). */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from({ length: count }, async () => {
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return server;
    }),
  );
  const ports = servers.map((server) => (server.address() as { port: number }).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

/** Runs a command from the repository root; resolves with its exit code and output. */
function run(command: string, args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      command,
      args,
      { cwd: root, env: { ...process.env, ...env }, timeout: 120_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
    );
  });
}

describe('trying the broadcast from the README', () => {
  it('pins the three ports, prints a spendable transaction and pays its broadcast', async () => {
    const [simulator, devnet, facilitator] = await freePorts(3);
    const service = startMain(
      {
        SIMULATOR_PORT: String(simulator),
        DEVNET_PORT: String(devnet),
        FACILITATOR_PORT: String(facilitator),
        LEDGER_URL: 'sqlite::memory:',
        SIMULATOR_HISTORY_HOURS: '0',
      },
      children,
    );
    await expect
      .poll(() => service.logs().some((entry) => entry['msg'] === 'fee service listening'), {
        timeout: 120_000,
      })
      .toBe(true);
    const logs = service.logs();
    const url = (msg: string, field: string) => String(logs.find((entry) => entry['msg'] === msg)?.[field]);
    expect(url('mempool simulator started', 'url')).toBe(`http://127.0.0.1:${simulator}`);
    expect(url('devnet started', 'rpcUrl')).toBe(`http://127.0.0.1:${devnet}`);
    expect(url('in-process facilitator started', 'url')).toBe(`http://127.0.0.1:${facilitator}`);
    expect((await fetch(`http://127.0.0.1:${simulator}/api/v1/fees/recommended`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${facilitator}/supported`)).status).toBe(200);
    const base = url('fee service listening', 'url');

    // The README's two commands, from the repository root.
    const testTx = () =>
      run('npm', ['run', '-s', 'test-tx', '--', '--simulator', `http://127.0.0.1:${simulator}`]);
    const tx = await testTx();
    expect(tx.code, tx.stderr).toBe(0);
    const hex = tx.stdout.trim();
    expect(hex).toMatch(/^[0-9a-f]{200,}$/);
    const txid = /^txid ([0-9a-f]{64}):/.exec(tx.stderr)?.[1];
    expect(txid).toBeDefined();
    const paid = await run(
      process.execPath,
      [
        '--conditions=tollbooth-source',
        '--import',
        'tsx',
        'packages/fetch/src/cli.ts',
        `${base}/api/v1/broadcast`,
        '-H',
        'content-type: application/json',
        '-d',
        JSON.stringify({ hex }),
      ],
      { TOLLBOOTH_PAYER_KEY: PAYER_KEY },
    );
    expect(paid.code, `${paid.stdout}${paid.stderr}`).toBe(0);
    expect(paid.stdout.split('\n')[0]).toBe('200 OK');
    expect(paid.stdout).toContain(`"txid":"${txid}"`);
    // It is in the simulator's mempool now; the next test transaction spends another output.
    expect((await fetch(`http://127.0.0.1:${simulator}/api/tx/${txid}`)).status).toBe(200);
    const next = await testTx();
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout.trim()).not.toBe(hex);

    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
  }, 300_000);

  it.each(['SIMULATOR_PORT', 'DEVNET_PORT', 'FACILITATOR_PORT'])(
    'names %s when its port is taken, exit 1, no stack',
    async (variable) => {
      const busy = createServer();
      held.push(busy);
      await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
      const port = (busy.address() as { port: number }).port;
      const service = startMain(
        { [variable]: String(port), LEDGER_URL: 'sqlite::memory:', OBSERVATORY_ENABLED: 'false' },
        children,
      );
      expect(await service.exited, service.out.stderr).toBe(1);
      expect(service.out.stderr).toBe(
        `${variable}: port ${port} is in use: set ${variable} to a free port (0 picks one)\n`,
      );
    },
    120_000,
  );
});
