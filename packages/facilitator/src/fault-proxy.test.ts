// The fault proxy in front of a real facilitator settling on the devnet: every mode, the control
// endpoint, and the proxy as its own process.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createHttpFacilitatorClient,
  FacilitatorError,
  type PaymentRequired,
  type PaymentRequirements,
} from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { createExactEvmFacilitator, createPaymentPayload } from '@tollbooth/evm';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningFacilitatorServer, startFacilitatorServer } from './facilitator-server';
import { createFacilitatorFaultControl } from './fault-control';
import { toFaultSetting } from './fault-modes';
import { type FacilitatorFaultProxy, startFacilitatorFaultProxy } from './fault-proxy';

let devnet: Devnet;
let server: RunningFacilitatorServer;
let proxy: FacilitatorFaultProxy;
let payerIndex = 0;

beforeAll(async () => {
  devnet = await startDevnet({ chainId: 8453, payers: 16 });
  const facilitator = createExactEvmFacilitator({
    account: devnet.accounts.facilitator.privateKey as Hex,
    chain: devnet.chain,
    rpcUrl: devnet.rpcUrl,
    pollingIntervalMs: 50,
  });
  server = await startFacilitatorServer({ facilitator });
  proxy = await startFacilitatorFaultProxy({ target: server.url, slowSupportedMs: 2_000 });
});

afterAll(async () => {
  await proxy?.close();
  await server?.close();
  await devnet?.stop();
});

afterEach(() => proxy.setMode('pass'));

function requirements(): PaymentRequirements {
  return {
    scheme: 'exact',
    network: 'eip155:8453',
    amount: '1000',
    asset: devnet.token.address,
    payTo: devnet.accounts.payTo.address,
    maxTimeoutSeconds: 60,
    extra: { name: devnet.token.name, version: devnet.token.version },
  };
}

/** A fresh payment from a payer of its own, with that payer's balance before it. */
async function payment() {
  const payer = devnet.accounts.payers[payerIndex++]!;
  const paymentRequired: PaymentRequired = {
    x402Version: 2,
    resource: { url: 'http://127.0.0.1/paid' },
    accepts: [requirements()],
  };
  const payload = await createPaymentPayload({
    paymentRequired,
    account: privateKeyToAccount(payer.privateKey as Hex),
  });
  return { payload, payer: payer.address, before: await devnet.balanceOf(payer.address) };
}

const client = (settleTimeoutMs = 10_000, timeoutMs = 10_000) =>
  createHttpFacilitatorClient({ url: proxy.url, settleTimeoutMs, timeoutMs });

async function failure(call: Promise<unknown>): Promise<FacilitatorError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FacilitatorError);
  return error as FacilitatorError;
}

describe('facilitator fault proxy', () => {
  it('passes every operation through unchanged in pass mode and counts them', async () => {
    const before = proxy.stats();
    const { payload, payer, before: balance } = await payment();
    const c = client();
    expect((await c.supported()).kinds).toContainEqual(expect.objectContaining({ network: 'eip155:8453' }));
    expect(await c.verify(payload, requirements())).toMatchObject({ isValid: true, payer });
    expect(await c.settle(payload, requirements())).toMatchObject({ success: true, payer });
    expect(balance - (await devnet.balanceOf(payer))).toBe(1000n);
    const after = proxy.stats();
    expect(after.forwarded.settle - before.forwarded.settle).toBe(1);
    expect(after.forwarded.verify - before.forwarded.verify).toBe(1);
    expect(after.faulted.settle).toBe(before.faulted.settle);
  });

  it.each([
    ['settle-answer-dropped', 'network'],
    ['settle-500-after-transfer', 'http-5xx'],
    ['settle-answer-hung', 'timeout'],
  ] as const)('%s: the transfer lands on chain and the caller gets a %s failure', async (mode, kind) => {
    const { payload, payer, before } = await payment();
    proxy.setMode(mode);
    const forwarded = proxy.stats().forwarded.settle;
    const error = await failure(client(3_000).settle(payload, requirements()));
    expect(error.kind).toBe(kind);
    expect(proxy.stats().forwarded.settle).toBe(forwarded + 1);
    expect(before - (await devnet.balanceOf(payer))).toBe(1000n);
  });

  it.each([
    ['settle-failed-after-transfer', 200],
    ['settle-failed-400-after-transfer', 400],
  ] as const)(
    '%s: the transfer lands on chain and the caller reads a refusal (HTTP %i) naming no transaction',
    async (mode, status) => {
      const { payload, payer, before } = await payment();
      proxy.setMode(mode);
      const forwarded = proxy.stats().forwarded.settle;
      const raw = await fetch(`${proxy.url}/settle`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          x402Version: 2,
          paymentPayload: payload,
          paymentRequirements: requirements(),
        }),
      });
      expect(raw.status).toBe(status);
      expect(await raw.json()).toEqual({
        success: false,
        errorReason: 'unexpected_settle_error',
        errorMessage: 'the facilitator failed while settling',
        transaction: '',
        network: 'eip155:8453',
        payer,
      });
      expect(proxy.stats().forwarded.settle).toBe(forwarded + 1);
      expect(before - (await devnet.balanceOf(payer))).toBe(1000n);
      // The gate's facilitator client reads it as the facilitator's refusal, whatever the status.
      const again = await payment();
      expect(await client().settle(again.payload, requirements())).toMatchObject({
        success: false,
        errorReason: 'unexpected_settle_error',
        transaction: '',
      });
      expect(again.before - (await devnet.balanceOf(again.payer))).toBe(1000n);
    },
  );

  it('settle-unmined-hash: answers success with a transaction that does not exist, and nothing moves', async () => {
    const { payload, payer, before } = await payment();
    proxy.setMode('settle-unmined-hash');
    const receipt = await client().settle(payload, requirements());
    expect(receipt).toMatchObject({ success: true, network: 'eip155:8453', payer });
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    await expect(
      devnet.publicClient.getTransactionReceipt({ hash: receipt.transaction as Hex }),
    ).rejects.toThrow();
    expect(await devnet.balanceOf(payer)).toBe(before);
  });

  it('settle-refused: refuses /settle definitely without forwarding it, and nothing moves', async () => {
    const { payload, payer, before } = await payment();
    proxy.setMode('settle-refused');
    const forwarded = proxy.stats().forwarded.settle;
    expect(await client().verify(payload, requirements())).toMatchObject({ isValid: true });
    const receipt = await client().settle(payload, requirements());
    expect(receipt).toMatchObject({
      success: false,
      errorReason: 'invalid_exact_evm_insufficient_balance',
      network: 'eip155:8453',
      payer,
    });
    expect(proxy.stats().forwarded.settle).toBe(forwarded);
    expect(await devnet.balanceOf(payer)).toBe(before);
  });

  it('verify-timeout holds verify unforwarded until the caller gives up', async () => {
    const { payload } = await payment();
    proxy.setMode('verify-timeout');
    const forwarded = proxy.stats().forwarded.verify;
    expect((await failure(client(10_000, 300).verify(payload, requirements()))).kind).toBe('timeout');
    expect(proxy.stats().forwarded.verify).toBe(forwarded);
  });

  it('garbage-json and connection-reset fail the named operations only, without forwarding', async () => {
    const { payload, payer, before } = await payment();
    proxy.setMode({ mode: 'garbage-json', operations: ['settle'] });
    expect(await client().verify(payload, requirements())).toMatchObject({ isValid: true });
    expect((await failure(client().settle(payload, requirements()))).kind).toBe('invalid-response');
    proxy.setMode('connection-reset');
    expect((await failure(client().verify(payload, requirements()))).kind).toBe('network');
    expect((await failure(client().settle(payload, requirements()))).kind).toBe('network');
    expect(await devnet.balanceOf(payer)).toBe(before);
  });

  it('slow-supported delays /supported past a short timeout and answers a patient caller', async () => {
    proxy.setMode('slow-supported');
    expect((await failure(client(10_000, 200).supported())).kind).toBe('timeout');
    expect((await client(10_000, 10_000).supported()).kinds.length).toBeGreaterThan(0);
  });

  it('frozen holds settle unforwarded, and forwards it when it thaws', async () => {
    const { payload, payer, before } = await payment();
    proxy.setMode({ mode: 'frozen', operations: ['settle'] });
    const forwarded = proxy.stats().forwarded.settle;
    const received = proxy.stats().received.settle;
    const settling = client(20_000).settle(payload, requirements());
    await proxy.waitForReceived('settle', received + 1);
    expect(proxy.stats()).toMatchObject({ held: 1, mode: 'frozen', operations: ['settle'] });
    expect(proxy.stats().forwarded.settle).toBe(forwarded);
    expect(await devnet.balanceOf(payer)).toBe(before);
    proxy.setMode('pass');
    expect(await settling).toMatchObject({ success: true, payer });
    expect(proxy.stats().held).toBe(0);
    expect(before - (await devnet.balanceOf(payer))).toBe(1000n);
  });

  it('delays each request and each answer by delayMs, in every mode', async () => {
    const delayed = await startFacilitatorFaultProxy({ target: server.url, delayMs: 150 });
    try {
      const { payload } = await payment();
      const c = createHttpFacilitatorClient({ url: delayed.url });
      let started = performance.now();
      expect(await c.verify(payload, requirements())).toMatchObject({ isValid: true });
      // One round trip: 150 ms out, 150 ms back, plus the facilitator's own work.
      expect(performance.now() - started).toBeGreaterThanOrEqual(295);
      delayed.setMode('connection-reset');
      started = performance.now();
      expect((await failure(c.supported())).kind).toBe('network');
      expect(performance.now() - started).toBeGreaterThanOrEqual(145);
      expect((await createFacilitatorFaultControl({ url: delayed.url }).stats()).received).toMatchObject({
        verify: 1,
        supported: 1,
      });
    } finally {
      await delayed.close();
    }
    await expect(startFacilitatorFaultProxy({ target: server.url, delayMs: -1 })).rejects.toThrow(
      /delayMs must be a non-negative number/,
    );
  });

  it('is driven over HTTP through its control endpoint', async () => {
    const control = createFacilitatorFaultControl({ url: proxy.url });
    expect(await control.setMode({ mode: 'connection-reset', operations: ['supported'] })).toMatchObject({
      mode: 'connection-reset',
      operations: ['supported'],
    });
    expect(proxy.mode).toBe('connection-reset');
    expect((await control.stats()).mode).toBe('connection-reset');
    const bad = await fetch(`${proxy.url}/__fault`, { method: 'PUT', body: '{"mode":"melt"}' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/mode must be one of/);
    expect(proxy.mode).toBe('connection-reset');
  });

  it('refuses unknown modes and operations on modes that do not take them', () => {
    expect(() => toFaultSetting('melt')).toThrow(/mode must be one of/);
    expect(() => toFaultSetting({ mode: 'settle-answer-dropped', operations: ['verify'] })).toThrow(
      /does not take operations/,
    );
    expect(toFaultSetting('settle-answer-hung')).toEqual({
      mode: 'settle-answer-hung',
      operations: ['settle'],
    });
    expect(toFaultSetting('frozen').operations).toEqual(['verify', 'settle', 'supported']);
  });

  it('runs as its own process, switched over HTTP and killed with SIGKILL while holding a request', async () => {
    const cli = join(dirname(fileURLToPath(import.meta.url)), 'fault-proxy-cli.ts');
    const child = spawn(
      process.execPath,
      ['--conditions=tollbooth-source', '--import', 'tsx', cli, '--target', server.url, '--mode', 'pass'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_c, s) => resolve(s)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const line = /fault-proxy: (http:\/\/\S+) -> /.exec(out);
          if (line) resolve(line[1]!);
        });
        void exited.then(() => reject(new Error('the proxy exited before listening')));
      });
      const control = createFacilitatorFaultControl({ url });
      await control.setMode('frozen');
      const held = failure(createHttpFacilitatorClient({ url, timeoutMs: 20_000 }).supported());
      await expect.poll(async () => (await control.stats()).held).toBe(1);
      child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');
      expect((await held).kind).toBe('network');
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});
