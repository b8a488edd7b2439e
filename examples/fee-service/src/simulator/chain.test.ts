import * as btc from '@scure/btc-signer';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { faucetSpend, paymentScript } from '../../test/fixtures/raw-tx';
import { type MempoolSimulator, startMempoolSimulator } from './server';
import { spendableTestTransaction } from './test-tx';
import { witnessCommitment } from './transactions';

// The root config's 30 s timeouts are not inherited by the unit project; simulators are CPU-bound.
vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

const PARSE = { allowUnknownOutputs: true, allowUnknownInputs: true, disableScriptCheck: true } as const;
const getJson = async <T>(url: string): Promise<T> => (await fetch(url)).json() as Promise<T>;

interface EsploraTx {
  txid: string;
  fee: number;
  weight: number;
  size: number;
  vin: Array<{
    txid: string;
    vout: number;
    prevout: { value: number; scriptpubkey: string } | null;
    witness: string[];
  }>;
  vout: Array<{ value: number; scriptpubkey: string; scriptpubkey_type: string }>;
  status: { confirmed: boolean; block_height?: number };
}

async function rpc<T>(sim: MempoolSimulator, method: string, params: unknown[] = []) {
  const response = await fetch(sim.coreRpcUrl.replace(/\/\/[^@]+@/, '//'), {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${sim.rpcUser}:${sim.rpcPassword}`).toString('base64')}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ jsonrpc: '1.0', id: 1, method, params }),
  });
  return {
    status: response.status,
    body: (await response.json()) as { result: T; error: { code: number; message: string } | null },
  };
}

let sim: MempoolSimulator;
beforeAll(async () => {
  sim = await startMempoolSimulator({ scenario: 'calm', seed: 21 });
});
afterAll(() => sim?.close());

describe('simulated transactions', () => {
  it('are real serialisations: btc-signer parses each to the same txid, weight and outputs, and the fee is inputs minus outputs', async () => {
    const block = sim.model.tip();
    const shapes = new Set<string>();
    for (const tx of [...block.txs.slice(0, 60), ...sim.model.sortedMempool().slice(0, 60)]) {
      const material = sim.model.materialize(tx);
      const parsed = btc.Transaction.fromRaw(Buffer.from(material.hex, 'hex'), PARSE);
      expect(parsed.id).toBe(material.txid);
      expect(parsed.weight).toBe(tx.weight);
      expect(Math.ceil(parsed.weight / 4)).toBe(tx.vsize);
      const inputs = material.inputs.reduce((sum, input) => sum + input.prevout!.value, 0n);
      const outputs = material.outputs.reduce((sum, output) => sum + output.value, 0n);
      expect(Number(inputs - outputs)).toBe(tx.fee);
      shapes.add(tx.shape.key);
    }
    expect(shapes.size).toBeGreaterThan(5);
  });

  it('serves a transaction with its prevouts, and the funding transaction each prevout comes from', async () => {
    const txid = sim.model.txidOfTx(sim.model.tip().txs[3]!);
    const tx = await getJson<EsploraTx>(`${sim.url}/api/tx/${txid}`);
    expect(tx.status).toMatchObject({ confirmed: true, block_height: sim.model.tipHeight() });
    const hex = await (await fetch(`${sim.url}/api/tx/${txid}/hex`)).text();
    expect(btc.Transaction.fromRaw(Buffer.from(hex, 'hex'), PARSE).id).toBe(txid);
    for (const input of tx.vin) {
      const parent = await getJson<EsploraTx>(`${sim.url}/api/tx/${input.txid}`);
      expect(parent.vout[input.vout]).toMatchObject({
        value: input.prevout!.value,
        scriptpubkey: input.prevout!.scriptpubkey,
      });
    }
    expect(tx.vin.reduce((s, i) => s + i.prevout!.value, 0) - tx.vout.reduce((s, o) => s + o.value, 0)).toBe(
      tx.fee,
    );
  });

  it('serves a block with its transactions: txids, pages of 25, a coinbase paying subsidy plus fees and committing to the wtxids', async () => {
    const block = sim.model.tip();
    const txids = await getJson<string[]>(`${sim.url}/api/block/${block.hash}/txids`);
    expect(txids).toHaveLength(block.txCount);
    const page = await getJson<EsploraTx[]>(`${sim.url}/api/block/${block.hash}/txs/25`);
    expect(page.map((t) => t.txid)).toEqual(txids.slice(25, 50));
    const [coinbase] = await getJson<EsploraTx[]>(`${sim.url}/api/block/${block.hash}/txs`);
    expect(coinbase!.vin[0]).toMatchObject({ prevout: null, vout: 0xffffffff });
    expect(coinbase!.vout[0]!.value).toBe(block.subsidy + block.totalFees);
    const wtxids = sim.model
      .blockTransactions(block)
      .slice(1)
      .map((t) => t.wtxid);
    expect(coinbase!.vout[1]!.scriptpubkey).toBe(
      `6a24aa21a9ed${Buffer.from(witnessCommitment(wtxids)).toString('hex')}`,
    );
    expect((await fetch(`${sim.url}/api/block/${block.hash}/txs/7`)).status).toBe(400);
    const core = await rpc<{ tx: string[]; nTx: number }>(sim, 'getblock', [block.hash, 1]);
    expect(core.body.result.tx).toEqual(txids);
  });

  it('answers getblocktemplate with the projected block: parsable data, fees adding up to coinbasevalue minus the subsidy', async () => {
    const { body } = await rpc<{
      height: number;
      coinbasevalue: number;
      transactions: Array<{
        data: string;
        txid: string;
        hash: string;
        fee: number;
        weight: number;
        depends: number[];
      }>;
    }>(sim, 'getblocktemplate', [{ rules: ['segwit'] }]);
    const template = body.result;
    expect(template.height).toBe(sim.model.tipHeight() + 1);
    expect(template.transactions.length).toBe(sim.model.mempoolBlocks()[0]!.nTx);
    const fees = template.transactions.reduce((sum, t) => sum + t.fee, 0);
    expect(template.coinbasevalue).toBe(312_500_000 + fees);
    for (const t of template.transactions.slice(0, 40)) {
      const parsed = btc.Transaction.fromRaw(Buffer.from(t.data, 'hex'), PARSE);
      expect(parsed.id).toBe(t.txid);
      expect(parsed.weight).toBe(t.weight);
    }
    const rates = template.transactions.map((t) => t.fee / Math.ceil(t.weight / 4));
    expect(rates[0]).toBeGreaterThanOrEqual(rates.at(-1)!);
  });
});

describe('broadcasts', () => {
  it('take a signed transaction into the mempool, answer it again as known, and mine it', async () => {
    const spend = faucetSpend(sim.model, { output: 10, fee: 20_000n });
    const [accepted] = (
      await rpc<Array<{ allowed: boolean; vsize: number }>>(sim, 'testmempoolaccept', [[spend.hex]])
    ).body.result;
    expect(accepted).toMatchObject({ allowed: true, vsize: 110 });
    const sent = await fetch(`${sim.url}/api/tx`, { method: 'POST', body: spend.hex });
    expect(await sent.text()).toBe(spend.txid);
    expect((await rpc<string>(sim, 'sendrawtransaction', [spend.hex])).body.result).toBe(spend.txid);
    const [known] = (await rpc<Array<{ 'reject-reason': string }>>(sim, 'testmempoolaccept', [[spend.hex]]))
      .body.result;
    expect(known!['reject-reason']).toBe('txn-already-in-mempool');
    const entry = await rpc<{ vsize: number; fees: { base: number } }>(sim, 'getmempoolentry', [spend.txid]);
    expect(entry.body.result).toMatchObject({ vsize: 110, fees: { base: 0.0002 } });
    expect(sim.model.recentArrivals()[0] && sim.model.txidOfTx(sim.model.recentArrivals()[0]!)).toBe(
      spend.txid,
    );
    sim.mineBlock();
    const tx = await getJson<EsploraTx>(`${sim.url}/api/tx/${spend.txid}`);
    expect(tx.status).toMatchObject({ confirmed: true, block_height: sim.model.tipHeight() });
    const again = await rpc<string>(sim, 'sendrawtransaction', [spend.hex]);
    expect(again.status).toBe(500);
    expect(again.body.error).toEqual({ code: -27, message: 'Transaction outputs already in utxo set' });
    // Its output is spendable: gettxout knows it.
    const out = await rpc<{ confirmations: number; value: number }>(sim, 'gettxout', [spend.txid, 0]);
    expect(out.body.result).toMatchObject({
      confirmations: 1,
      value: Number((spend.spent.value - 20_000n) / 1n) / 1e8,
    });
  });

  it("refuse in Core's words and codes, over RPC and in both REST text forms", async () => {
    const dust = faucetSpend(sim.model, { output: 11, outputs: [{ script: paymentScript(), value: 200n }] });
    const lowFee = faucetSpend(sim.model, { output: 12, fee: 50n });
    const absurd = faucetSpend(sim.model, { output: 40, fee: 1_500_000n });
    const cases: Array<[string, number, RegExp, string]> = [
      ['00', -22, /^TX decode failed/, 'decode-failed'],
      [dust.hex, -26, /^dust$/, 'dust'],
      [lowFee.hex, -26, /^min relay fee not met, 50 < 110$/, 'min relay fee not met'],
      [absurd.hex, -25, /^Fee exceeds maximum configured by user/, 'max-fee-exceeded'],
    ];
    for (const [hex, code, message, reason] of cases) {
      const sent = await rpc(sim, 'sendrawtransaction', [hex]);
      expect(sent.status).toBe(500);
      expect(sent.body.error?.code).toBe(code);
      expect(sent.body.error?.message).toMatch(message);
      if (code !== -22) {
        const [result] = (
          await rpc<Array<{ 'reject-reason': string; 'reject-details': string }>>(sim, 'testmempoolaccept', [
            [hex],
          ])
        ).body.result;
        expect(result!['reject-reason']).toBe(reason);
        expect(result!['reject-details']).toMatch(message); // Core ≥ 29: the full message beside the reason
      }
    }
    const json = await fetch(`${sim.url}/api/tx`, { method: 'POST', body: dust.hex });
    expect(json.status).toBe(400);
    expect(await json.text()).toBe('sendrawtransaction RPC error: {"code":-26,"message":"dust"}');
    sim.setBroadcastErrorFormat('code');
    try {
      const text = await (await fetch(`${sim.url}/api/tx`, { method: 'POST', body: lowFee.hex })).text();
      expect(text).toBe('sendrawtransaction RPC error -26: min relay fee not met, 50 < 110');
    } finally {
      sim.setBroadcastErrorFormat('json');
    }
  });

  it('replaces a transaction that pays more (BIP 125 fee rules) and refuses one that pays less', async () => {
    const first = faucetSpend(sim.model, { output: 20, fee: 3_000n });
    expect((await rpc<string>(sim, 'sendrawtransaction', [first.hex])).body.result).toBe(first.txid);
    const cheaper = faucetSpend(sim.model, { output: 20, fee: 2_900n, to: paymentScript(9) });
    const refused = await rpc(sim, 'sendrawtransaction', [cheaper.hex]);
    expect(refused.body.error?.code).toBe(-26);
    expect(refused.body.error?.message).toMatch(/^insufficient fee, rejecting replacement/);
    const richer = faucetSpend(sim.model, { output: 20, fee: 6_000n, to: paymentScript(9) });
    expect((await rpc<string>(sim, 'sendrawtransaction', [richer.hex])).body.result).toBe(richer.txid);
    expect(sim.model.findTx(first.txid)).toBeUndefined();
    expect(sim.model.findTx(richer.txid)).toBeDefined();
  });

  it('answers -28 while Core is warming up', async () => {
    sim.injectFault({ status: 'warmup', count: 1 });
    const warming = await rpc(sim, 'testmempoolaccept', [[faucetSpend(sim.model, { output: 30 }).hex]]);
    expect(warming.status).toBe(500);
    expect(warming.body.error).toEqual({ code: -28, message: 'Loading block index…' });
    expect((await rpc(sim, 'getblockcount')).status).toBe(200);
  });

  it('lists the newest arrivals as Esplora does', async () => {
    const recent = await getJson<Array<{ txid: string; fee: number; vsize: number; value: number }>>(
      `${sim.url}/api/mempool/recent`,
    );
    expect(recent.length).toBeGreaterThan(0);
    expect(recent.length).toBeLessThanOrEqual(10);
    for (const entry of recent) expect(Object.keys(entry).sort()).toEqual(['fee', 'txid', 'value', 'vsize']);
  });
});

describe('the faucet after a long history', () => {
  it('is still found, and spendable by npm run test-tx, once its block’s transactions are pruned', async () => {
    // npm start runs 36 simulated hours (≈ 216 blocks) before it listens: past the 200 kept blocks
    const long = await startMempoolSimulator({ seed: 42 });
    try {
      long.advance(36 * 3_600_000);
      expect(long.model.blocks.length).toBeGreaterThan(200);
      const { txid } = long.model.faucet.funding;
      const found = await fetch(`${long.url}/api/tx/${txid}`);
      expect(found.status).toBe(200);
      expect(((await found.json()) as { status: { confirmed: boolean } }).status.confirmed).toBe(true);
      const tx = await spendableTestTransaction({ simulatorUrl: long.url, seed: 42 });
      expect(tx.spends).toMatchObject({ txid, vout: 0 });
    } finally {
      await long.close();
    }
  });
});
