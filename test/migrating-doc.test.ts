// docs/migrating-from-x402.md shows one paywall written for the official middleware and for
// Tollbooth, on Base Sepolia with the public test facilitator. Both blocks run here as written
// (only the placeholder payTo address and the facilitator URL replaced), each in its own process
// on a devnet of chain 84532, and the official client pays each: same challenge, same answer,
// same charge.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PaymentRequired } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { type RunningFacilitatorServer, startFacilitatorServer } from '@tollbooth/facilitator';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  balances,
  challengeOf,
  deltas,
  devnetFacilitator,
  fillSnippetPlaceholders,
  PRICE,
  payerAccount,
} from './support/interop-harness';
import { ROOT } from './support/packed-packages';

const DOC = join(ROOT, 'docs', 'migrating-from-x402.md');
const BLOCKS = ['official', 'tollbooth'] as const;

let devnet: Devnet;
let facilitator: RunningFacilitatorServer;
let scratch: string;
const children: ChildProcess[] = [];
const urls = new Map<(typeof BLOCKS)[number], string>();

/** The doc's first two `ts` blocks: the official paywall, then Tollbooth's. */
function paywallBlocks(): [string, string] {
  const blocks = [...readFileSync(DOC, 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
  expect(blocks.length).toBeGreaterThanOrEqual(2);
  return [blocks[0]!, blocks[1]!];
}

/** Runs a block (TypeScript, from the workspace sources) and resolves with the URL it listens on. */
function runBlock(name: string, source: string): Promise<string> {
  const file = join(scratch, `${name}.ts`);
  writeFileSync(
    file,
    fillSnippetPlaceholders(`${name} block`, source, {
      payTo: devnet.accounts.payTo.address,
      facilitatorUrl: facilitator.url,
    }),
  );
  const preload = join(ROOT, 'test', 'support', 'report-listen-port.mjs');
  const child = spawn(
    process.execPath,
    ['--conditions=tollbooth-source', '--import', 'tsx', '--import', preload, file],
    { cwd: ROOT, stdio: 'pipe' },
  );
  children.push(child);
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = /listening (\S+)/.exec(output);
      if (match) resolve(match[1]!);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`the ${name} block exited with ${code}:\n${output}`)));
  });
}

beforeAll(async () => {
  devnet = await startDevnet({ chainId: 84532, payers: 2 });
  // The official middleware asks the facilitator's /supported when it starts: it runs first.
  facilitator = await startFacilitatorServer({ facilitator: devnetFacilitator(devnet) });
  // Inside the repository, so that the blocks resolve the workspace's packages.
  mkdirSync(join(ROOT, 'node_modules', '.cache'), { recursive: true });
  scratch = mkdtempSync(join(ROOT, 'node_modules', '.cache', 'migrating-doc-'));
  const sources = paywallBlocks();
  const started = await Promise.all(BLOCKS.map((name, i) => runBlock(name, sources[i]!)));
  for (const [i, name] of BLOCKS.entries()) urls.set(name, started[i]!);
});

afterAll(async () => {
  for (const child of children) child.kill('SIGTERM');
  await facilitator?.close();
  await devnet?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('docs/migrating-from-x402.md', () => {
  it('shows two paywalls that ask for the same payment', async () => {
    const [official, ours] = (await Promise.all(
      BLOCKS.map(async (name) => {
        const response = await fetch(`${urls.get(name)}/weather`);
        expect(response.status, name).toBe(402);
        return challengeOf(response);
      }),
    )) as [PaymentRequired, PaymentRequired];
    // The one difference, in the doc's table: the authorization lifetime each defaults to.
    const withoutLifetime = ({ maxTimeoutSeconds: _, ...rest }: PaymentRequired['accepts'][number]) => rest;
    expect(ours.accepts.map(withoutLifetime)).toEqual(official.accepts.map(withoutLifetime));
    expect([official.accepts[0]!.maxTimeoutSeconds, ours.accepts[0]!.maxTimeoutSeconds]).toEqual([300, 60]);
    expect(ours.accepts[0]).toMatchObject({
      scheme: 'exact',
      network: 'eip155:84532',
      amount: PRICE.toString(),
      asset: devnet.token.address,
      payTo: devnet.accounts.payTo.address,
    });
    expect(ours.resource.description).toBe(official.resource.description);
  });

  it.each(BLOCKS)('the official client pays the %s paywall once and gets the forecast', async (name) => {
    const payer = payerAccount(devnet, BLOCKS.indexOf(name));
    const before = await balances(devnet, payer.address);
    const client = new x402Client().register('eip155:*', new ExactEvmScheme(payer));

    const response = await wrapFetchWithPayment(fetch, client)(`${urls.get(name)}/weather`);

    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ forecast: 'sunny' });
    const receipt = decodePaymentResponseHeader(response.headers.get('payment-response')!);
    expect(receipt).toMatchObject({ success: true, network: 'eip155:84532', payer: payer.address });
    expect(await deltas(devnet, payer.address, before)).toEqual({ paid: PRICE, received: PRICE });
  });
});
