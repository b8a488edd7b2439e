import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildRawTx, faucetSpend } from '../../test/fixtures/raw-tx';
import { type MempoolSimulator, startMempoolSimulator } from '../simulator/server';
import { BITCOIN_CORE_SNAPSHOT_SCHEMA } from '../snapshot/schemas';
import { createBitcoinCoreClient } from './bitcoin-core';
import { BroadcastRejectedError, CoreRpcError, UpstreamHttpError } from './errors';

vi.setConfig({ testTimeout: 30_000, hookTimeout: 60_000 });

describe('Bitcoin Core adapter against the simulator', () => {
  let sim: MempoolSimulator;
  let subSat: MempoolSimulator;
  beforeAll(async () => {
    [sim, subSat] = await Promise.all([
      startMempoolSimulator({ scenario: 'spike', seed: 8 }),
      startMempoolSimulator({ scenario: 'sub-sat', seed: 8 }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([sim.close(), subSat.close()]);
  });

  it('converts estimatesmartfee BTC/kvB to sat/vB exactly, in both modes', async () => {
    const core = createBitcoinCoreClient({ url: sim.coreRpcUrl });
    const economical = await core.estimateSmartFee(6, 'economical');
    const conservative = await core.estimateSmartFee(6, 'conservative');
    expect(economical.satPerVb).toBe(sim.model.smartFee(6, 'economical'));
    expect(conservative.satPerVb).toBe(sim.model.smartFee(6, 'conservative'));
    expect(conservative.satPerVb!).toBeGreaterThanOrEqual(economical.satPerVb!);
    expect(economical.blocks).toBe(6);
    expect((await core.estimateSmartFee(1)).blocks).toBe(2);
  });

  it('reads the tip and several targets in one JSON-RPC batch, the same as one call each', async () => {
    const core = createBitcoinCoreClient({ url: sim.coreRpcUrl });
    const before = sim.requestCount('/');
    const { tipHeight, estimates } = await core.estimateSmartFees([1, 6, 144], 'conservative');
    expect(sim.requestCount('/') - before).toBe(1);
    expect(tipHeight).toBe(sim.model.tipHeight());
    for (const [i, target] of [1, 6, 144].entries()) {
      expect(estimates[i]).toEqual(await core.estimateSmartFee(target, 'conservative'));
    }
  });

  it('builds a validated snapshot with sub-1 rates on a 0.1 sat/vB relay floor', async () => {
    const core = createBitcoinCoreClient({
      url: subSat.url,
      username: subSat.rpcUser,
      password: subSat.rpcPassword,
    });
    const snapshot = await core.fetchSnapshot();
    expect(snapshot.snapshot_schema).toBe(BITCOIN_CORE_SNAPSHOT_SCHEMA);
    expect(snapshot.source).toBe(subSat.url);
    expect(snapshot.source).not.toContain(subSat.rpcPassword);
    expect(snapshot.tiers.minimum).toBe(0.1);
    expect(snapshot.tiers.fastest).toBeLessThan(1);
    expect(snapshot.mempool.count).toBe(subSat.model.mempoolInfo().count);
    expect(snapshot.mempool.vsize).toBe(subSat.model.mempoolInfo().vsize);
    expect(snapshot.mempool.total_fee).toBe(subSat.model.mempoolInfo().total_fee);
    expect(snapshot.tip_height).toBe(subSat.model.tipHeight());
  });

  it('reads getmempoolinfo and getblockstats', async () => {
    const core = createBitcoinCoreClient({ url: sim.coreRpcUrl });
    const info = await core.getMempoolInfo();
    expect(info.mempoolminfee).toBe(0.00001);
    const tip = sim.model.tip();
    const stats = await core.getBlockStats(tip.height);
    expect(stats.blockhash).toBe(tip.hash);
    expect(stats.feerate_percentiles).toHaveLength(5);
    expect(stats.subsidy).toBe(312_500_000);
    expect(stats.totalfee).toBe(tip.totalFees);
    expect((await core.getBlockStats(tip.hash)).height).toBe(tip.height);
  });

  it('reads the JSON-RPC error of an HTTP 500 as a typed CoreRpcError', async () => {
    const core = createBitcoinCoreClient({ url: sim.coreRpcUrl });
    const error = await core.getBlockStats(99_999_999).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CoreRpcError);
    expect((error as CoreRpcError).rpcCode).toBe(-8);
    expect((error as CoreRpcError).retryable).toBe(false);
  });

  it('reports warm-up (-28) as retryable while the node is out of sync', async () => {
    sim.setScenario('upstream-down');
    try {
      const core = createBitcoinCoreClient({ url: sim.coreRpcUrl, retry: { attempts: 2, baseDelayMs: 1 } });
      const error = await core.fetchSnapshot().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CoreRpcError);
      expect((error as CoreRpcError).rpcCode).toBe(-28);
      expect((error as CoreRpcError).retryable).toBe(true);
      await expect(core.getBlockCount()).resolves.toBe(sim.model.tipHeight());
    } finally {
      sim.setScenario('spike');
    }
  });

  it('refuses wrong credentials with a typed 401', async () => {
    const core = createBitcoinCoreClient({ url: sim.url, username: 'nobody', password: 'wrong' });
    const error = await core.getBlockCount().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamHttpError);
    expect((error as UpstreamHttpError).status).toBe(401);
  });

  it('broadcasts with sendrawtransaction and types -22, -25, -26 and -27 rejections', async () => {
    const core = createBitcoinCoreClient({ url: sim.coreRpcUrl });
    const spend = faucetSpend(sim.model, { output: 5, fee: 50_000n });
    const { txid } = await core.sendRawTransaction(spend.hex);
    expect(txid).toBe(spend.txid);
    expect(sim.model.findTx(txid)).toBeDefined();
    // The same bytes again: the node already has them and answers the txid.
    expect((await core.sendRawTransaction(spend.hex)).txid).toBe(txid);
    sim.mineBlock();
    expect(sim.model.findTx(txid)?.block).toBeDefined();
    const cases: [string, number, string][] = [
      ['zz', -22, 'decode_failed'],
      [buildRawTx({ inputTxidByte: 0x51, outputHashByte: 3 }), -25, 'missing_or_spent_inputs'],
      [
        faucetSpend(sim.model, { output: 6, outputs: [{ script: spend.spent.script, value: 100n }] }).hex,
        -26,
        'policy_rejected',
      ],
      [spend.hex, -27, 'already_in_chain'],
    ];
    for (const [hex, code, reason] of cases) {
      const error = await core.sendRawTransaction(hex).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BroadcastRejectedError);
      expect(error).toMatchObject({ rpcCode: code, reason });
      expect((error as BroadcastRejectedError).raw).toContain(`"code":${code}`);
    }
  });

  it('answers testmempoolaccept without adding to the mempool, with Core reject reasons', async () => {
    const core = createBitcoinCoreClient({ url: sim.coreRpcUrl });
    const spend = faucetSpend(sim.model, { output: 7 });
    const [result] = await core.testMempoolAccept([spend.hex]);
    expect(result).toMatchObject({ txid: spend.txid, allowed: true, vsize: 110, fees: { base: 0.00002 } });
    expect(sim.model.findTx(result!.txid!)).toBeUndefined();
    const [missing] = await core.testMempoolAccept([buildRawTx({ inputTxidByte: 0x61 })]);
    expect(missing).toMatchObject({ allowed: false, 'reject-reason': 'missing-inputs' });
    await core.sendRawTransaction(spend.hex);
    const [again] = await core.testMempoolAccept([spend.hex]);
    expect(again).toMatchObject({
      txid: spend.txid,
      allowed: false,
      'reject-reason': 'txn-already-in-mempool',
    });
  });

  it('reports every bad option at once', () => {
    expect(() => createBitcoinCoreClient({ url: '', mode: 'fast' as never })).toThrow(
      /url is required; mode must be economical or conservative/,
    );
  });
});
