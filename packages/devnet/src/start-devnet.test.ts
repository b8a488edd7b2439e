import { afterAll, describe, expect, it, vi } from 'vitest';
import { CANONICAL_USDC } from './constants';
import type { Devnet } from './devnet';
import { DevnetError } from './errors';
import { startDevnet } from './start-devnet';

// Real anvil processes: allow for a busy 2-core machine running every suite at once.
vi.setConfig({ testTimeout: 20_000, hookTimeout: 30_000 });

const started: Devnet[] = [];
async function start(...args: Parameters<typeof startDevnet>): Promise<Devnet> {
  const devnet = await startDevnet(...args);
  started.push(devnet);
  return devnet;
}

afterAll(async () => {
  await Promise.all(started.map((d) => d.stop()));
});

async function rpcAnswers(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
    });
    return response.ok;
  } catch {
    return false;
  }
}

describe('startDevnet', () => {
  it('rejects invalid options listing every problem at once', async () => {
    const error = await startDevnet({
      chainId: -1,
      port: 70_000,
      token: 'dai' as never,
      payers: 1.5,
      payerBalance: -1n,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DevnetError);
    expect((error as DevnetError).code).toBe('ERR_DEVNET_INVALID_OPTIONS');
    for (const field of ['chainId', 'port', 'token', 'payers', 'payerBalance']) {
      expect((error as Error).message).toContain(field);
    }
  });

  it('refuses atCanonicalAddress on a chain without a known USDC address', async () => {
    await expect(startDevnet({ chainId: 31337, atCanonicalAddress: true })).rejects.toThrow(
      /atCanonicalAddress/,
    );
  });

  it('starts on Base Sepolia with the token at its canonical address and the USDC / 2 domain, and stops', async () => {
    const devnet = await start({ chainId: 84532, payers: 2, payerBalance: 5n });
    expect(devnet.rpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await devnet.publicClient.getChainId()).toBe(84532);
    expect(devnet.chain.id).toBe(84532);
    expect(devnet.token.address).toBe(CANONICAL_USDC[84532]!.address);
    expect(devnet.token.name).toBe('USDC');
    expect(
      await devnet.publicClient.readContract({
        address: devnet.token.address,
        abi: devnet.token.abi,
        functionName: 'name',
      }),
    ).toBe('USDC');
    expect(devnet.accounts.payers).toHaveLength(2);
    expect(await devnet.balanceOf(devnet.accounts.payers[1]!.address)).toBe(5n);
    await devnet.stop();
    expect(await rpcAnswers(devnet.rpcUrl)).toBe(false);
    await devnet.stop(); // idempotent
  });

  it('deploys the token at a fresh address on other chains, with custom metadata and many payers', async () => {
    const devnet = await start({ chainId: 31337, payers: 9, tokenName: 'Test Dollar', tokenVersion: '7' });
    expect(devnet.token.address).not.toBe(CANONICAL_USDC[8453]!.address);
    const read = (functionName: 'name' | 'version') =>
      devnet.publicClient.readContract({
        address: devnet.token.address,
        abi: devnet.token.abi,
        functionName,
      });
    expect(await read('name')).toBe('Test Dollar');
    expect(await read('version')).toBe('7');
    expect(devnet.token.version).toBe('7');
    expect(await devnet.balanceOf(devnet.accounts.payers[8]!.address)).toBe(1_000_000_000n);
  });

  it('holds transactions until mine() when automine is off, and moves chain time on request', async () => {
    const devnet = await start({ chainId: 8453, automine: false, payers: 1 });
    const payer = devnet.accounts.payers[0]!;
    const before = await devnet.publicClient.getBlockNumber({ cacheTime: 0 });
    const hash = await devnet.clientFor(payer.privateKey).writeContract({
      address: devnet.token.address,
      abi: devnet.token.abi,
      functionName: 'transfer',
      args: [devnet.accounts.payTo.address, 1n],
    });
    expect(await devnet.balanceOf(devnet.accounts.payTo.address)).toBe(0n);
    await devnet.mine();
    expect((await devnet.publicClient.getTransactionReceipt({ hash })).blockNumber).toBe(before + 1n);
    expect(await devnet.balanceOf(devnet.accounts.payTo.address)).toBe(1n);

    const t0 = await devnet.latestTimestamp();
    await devnet.increaseTime(3_600);
    await devnet.mine();
    expect(await devnet.latestTimestamp()).toBeGreaterThanOrEqual(t0 + 3_600n);
    await devnet.setNextBlockTimestamp(t0 + 10_000n);
    await devnet.mine();
    expect(await devnet.latestTimestamp()).toBe(t0 + 10_000n);
  });

  it('fails with a clear error when the port is taken', async () => {
    const first = await start({ chainId: 8453, payers: 0 });
    const port = Number(new URL(first.rpcUrl).port);
    const error = await startDevnet({ chainId: 8453, port, payers: 0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DevnetError);
    expect((error as DevnetError).code).toBe('ERR_DEVNET_ANVIL_START_FAILED');
    expect((error as Error).message).toContain(`127.0.0.1:${port}: address already in use`);
  });

  it('reports how anvil failed, with its stderr, when the binary exits at once', async () => {
    const error = await startDevnet({ anvilPath: '/bin/sh', startTimeoutMs: 2_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DevnetError);
    expect((error as DevnetError).code).toBe('ERR_DEVNET_ANVIL_START_FAILED');
    // sh rejects anvil's flags on stderr and exits non-zero
    expect((error as Error).message).toMatch(/exited with code [1-9]/);
    expect((error as Error).message).toContain('stderr:');
  });

  it('names the missing binary when anvilPath does not exist', async () => {
    const error = await startDevnet({ anvilPath: '/nonexistent/anvil' }).catch((e: unknown) => e);
    expect((error as DevnetError).code).toBe('ERR_DEVNET_ANVIL_NOT_FOUND');
    expect((error as Error).message).toBe(
      'anvil not found: anvilPath is "/nonexistent/anvil", which is not a file',
    );
  });
});
