// A replaced transaction explained (issue 33 part 2), on the simulator's calm, backlog and sub-sat
// scenarios: the upstream no longer has it, so the explainer answers its 404 unknown_transaction
// after verification and never settles — but says which transaction replaced it (mempool.space's
// RBF history, /api/v1/tx/:txid/rbf), in the message and in X-Replaced-By, instead of a bare 404.
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningFeeService } from '../src/service';
import type { ScenarioName } from '../src/simulator/scenarios';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';
import { faucetSpend } from './fixtures/raw-tx';
import { assertErrorBody } from './support/contract-schemas';
import { balanceOf, type JsonBody, removeScratch, startTestService } from './support/harness';

const SCENARIOS = ['calm', 'backlog', 'sub-sat'] as const satisfies readonly ScenarioName[];

let devnet: Devnet;
const worlds = new Map<ScenarioName, { simulator: MempoolSimulator; service: RunningFeeService }>();

beforeAll(async () => {
  devnet = await startDevnet({ payers: 2 });
  for (const scenario of SCENARIOS) {
    const simulator = await startMempoolSimulator({ scenario, seed: 34 });
    const service = await startTestService({ RATE_LIMIT_MAX: '100000' }, { devnet, simulator });
    worlds.set(scenario, { simulator, service });
  }
});

afterAll(async () => {
  await Promise.all([...worlds.values()].map(({ service }) => service.close()));
  await Promise.all([...worlds.values()].map(({ simulator }) => simulator.close()));
  await devnet?.stop();
  removeScratch();
});

async function broadcast(simulator: MempoolSimulator, hex: string): Promise<string> {
  const response = await fetch(`${simulator.url}/api/tx`, { method: 'POST', body: hex });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`the simulator refused the broadcast: ${text}`);
  return text;
}

describe.each(SCENARIOS)('in the %s scenario', (scenario) => {
  it('a replaced transaction answers 404 saying which transaction replaced it, never settled', async () => {
    const { simulator, service } = worlds.get(scenario)!;
    const account = privateKeyToAccount(devnet.accounts.payers[0]!.privateKey as Hex);
    const pay = wrapFetchWithPayment(
      fetch,
      new x402Client().register('eip155:*', new ExactEvmScheme(account)),
    );
    // one faucet output spent three times (BIP 125 signalled), each paying more: a chain of replacements
    const [first, second, third] = [2_000n, 4_000n, 6_000n].map((fee) =>
      faucetSpend(simulator.model, { output: 61, fee }),
    );
    for (const tx of [first!, second!, third!]) expect(await broadcast(simulator, tx.hex)).toBe(tx.txid);

    const before = await balanceOf(devnet, account.address);
    const replaced = await pay(`${service.url}/api/v1/ai/explain/transaction/${first!.txid}`);
    expect(replaced.status).toBe(404);
    expect(replaced.headers.get('x-replaced-by')).toBe(second!.txid);
    expect(replaced.headers.get('payment-response')).toBeNull();
    const body = (await replaced.json()) as JsonBody;
    assertErrorBody(body);
    expect(body['error'].code).toBe('unknown_transaction');
    expect(body['error'].message).toContain(`was replaced by ${second!.txid}`);
    expect(body['error'].message).toContain(`the latest is ${third!.txid}`);
    // the last one replaced stands in the mempool and is explained
    const latest = await pay(`${service.url}/api/v1/ai/explain/transaction/${third!.txid}`);
    expect(latest.status).toBe(200);
    // a transaction never seen stays a bare unknown
    const unknown = await pay(`${service.url}/api/v1/ai/explain/transaction/${'ab'.repeat(32)}`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('x-replaced-by')).toBeNull();
    expect(await balanceOf(devnet, account.address)).toBe(before - 10_000n); // only the 200 was charged
  });
});
