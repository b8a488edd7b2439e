import { createHash } from 'node:crypto';
import { subsidyAt } from '../domain/chain';
import {
  BLOCK_TX_VSIZE,
  BLOCK_VSIZE,
  byRateDesc,
  cumulativeVsizeOf,
  esploraFeeEstimates,
  estimateForTargetOf,
  feeRangeOf,
  mempoolBlockView,
  mempoolInfoOf,
  mergeByRate,
  projectBlocks,
  recommendedFeesOf,
  smartFeeOf,
} from './fee-estimates';
import { createPrng, type Prng } from './prng';
import { SCENARIOS, type ScenarioName, type ScenarioParameters } from './scenarios';
import { drawShape } from './transactions';
import { TransactionIndex } from './tx-index';
import type { Material, MempoolBlockView, RecommendedFees, SimBlock, SimTx } from './types';
import { createFaucet, type Faucet, type SpendableOutput } from './wallet';

/** Simulated time starts here (block timestamps), whatever the wall clock says. */
export const SIM_EPOCH_MS = Date.parse('2026-08-06T12:00:00Z');
/** Height of the tip when a simulation starts. */
export const SIM_START_HEIGHT = 910_000;
const MEAN_BLOCK_INTERVAL_MS = 600_000;
const HISTORY_BLOCKS = 16;
/** Blocks whose transactions are kept (older blocks keep their header and statistics only). */
const KEPT_BLOCKS = 200;

const POOLS = [
  { id: 111, name: 'Foundry USA', slug: 'foundryusa' },
  { id: 112, name: 'AntPool', slug: 'antpool' },
  { id: 115, name: 'ViaBTC', slug: 'viabtc' },
  { id: 36, name: 'F2Pool', slug: 'f2pool' },
  { id: 49, name: 'MARA Pool', slug: 'marapool' },
  { id: 43, name: 'SpiderPool', slug: 'spiderpool' },
] as const;

export { subsidyAt };

/**
 * The deterministic mempool and chain. Time moves only through {@link SimulationModel.advance};
 * everything else is a read of the state, so the same seed and the same advances give the same
 * answers. Transactions carry real serialisations (materialised on demand, `transactions.ts`);
 * the outputs a client may spend are the faucet's ({@link SimulationModel.faucet}) and those of
 * transactions it broadcast, so a broadcast spends real, tracked prevouts.
 */
export class SimulationModel {
  readonly seed: number;
  scenarioName: ScenarioName;
  params: ScenarioParameters;
  nowMs = SIM_EPOCH_MS;
  private rng: Prng;
  private counter = 0;
  /** The unconfirmed transactions by seq. */
  readonly mempool = new Map<number, SimTx>();
  readonly blocks: SimBlock[] = [];
  private readonly blockByHash = new Map<string, SimBlock>();
  /** The block of each confirmed transaction still kept. */
  readonly confirmed = new Map<number, SimBlock>();
  /** Transactions by txid, once materialised; funding transactions; spendable outputs. */
  readonly index: TransactionIndex;
  /** A key with confirmed outputs, for tests and demos that broadcast real signed transactions. */
  readonly faucet: Faucet;
  private nextArrivalMs = 0;
  private nextBlockMs = 0;
  /** The mempool sorted by rate, except `pending` arrivals not merged in yet. */
  private sorted: SimTx[] = [];
  private pending: SimTx[] = [];
  /** Recent arrivals, newest last (Esplora's `/mempool/recent`). */
  private readonly recent: SimTx[] = [];

  /** When the simulation starts (block timestamps and `nowMs`). */
  readonly startMs: number;

  /**
   * @param options.startMs simulated time at the start (default {@link SIM_EPOCH_MS}); the service
   *   starts it in the past and runs it forward to the present, so recorded history ends now
   */
  constructor(options: { seed: number; scenario: ScenarioName; startMs?: number }) {
    this.seed = options.seed >>> 0;
    this.startMs = options.startMs ?? SIM_EPOCH_MS;
    this.scenarioName = options.scenario;
    this.params = SCENARIOS[options.scenario];
    this.rng = createPrng(this.seed ^ 0x9e3779b9);
    this.index = new TransactionIndex(this.seed);
    this.faucet = createFaucet(this.seed);
    this.buildHistory();
    this.fillMempool(this.params.initialMempoolVsize, this.params.fees);
    if (this.params.initialSpikeVsize > 0 && this.params.spike) {
      this.fillMempool(this.params.initialSpikeVsize, this.params.spike);
    }
    this.nextArrivalMs = this.nowMs + this.rng.exponential(1000 / this.params.arrivalsPerSecond);
    this.nextBlockMs = this.nowMs + this.rng.exponential(MEAN_BLOCK_INTERVAL_MS);
  }

  /** Switches the dynamics and quirks; the chain and mempool carry on. */
  setScenario(name: ScenarioName): void {
    this.scenarioName = name;
    this.params = SCENARIOS[name];
    this.nextArrivalMs = this.nowMs + this.rng.exponential(1000 / this.params.arrivalsPerSecond);
  }

  /** A SHA-256 of the seed and a label: block hashes and merkle roots. */
  private hash(label: string): string {
    return createHash('sha256').update(`${this.seed}:${label}`).digest('hex');
  }

  private drawRate(dist: { median: number; sigma: number }): number {
    return Math.max(this.params.minRelayFee, Math.min(5_000, this.rng.logNormal(dist.median, dist.sigma)));
  }

  private makeTx(dist: { median: number; sigma: number }, arrivalMs: number): SimTx {
    const shape = drawShape(this.rng);
    const rate = this.drawRate(dist);
    const fee = Math.ceil(rate * shape.vsize);
    return {
      shape,
      vsize: shape.vsize,
      weight: shape.weight,
      size: shape.size,
      fee,
      rate: fee / shape.vsize,
      seq: this.counter++,
      arrivalMs,
      rbf: this.rng.next() < 0.3,
    };
  }

  private arrivalDistribution() {
    const { spike, fees } = this.params;
    return spike && this.rng.next() < spike.share ? spike : fees;
  }

  private fillMempool(vsize: number, dist: { median: number; sigma: number }) {
    let added = 0;
    while (added < vsize) {
      const tx = this.makeTx(dist, this.nowMs - this.rng.int(3_600_000));
      this.addToMempool(tx);
      added += tx.vsize;
    }
  }

  private buildHistory() {
    // Blocks before the start, each filled from fresh draws, so /api/v1/blocks has 15+ real-looking
    // entries; the faucet's funding transaction confirms in the first of them.
    this.nowMs = this.startMs - HISTORY_BLOCKS * MEAN_BLOCK_INTERVAL_MS;
    for (let i = 0; i < HISTORY_BLOCKS; i += 1) {
      this.nowMs += MEAN_BLOCK_INTERVAL_MS;
      if (i === 0) this.addExternal(this.faucet.funding);
      this.fillMempool(0.97 * BLOCK_VSIZE, this.params.fees);
      this.mine(SIM_START_HEIGHT - HISTORY_BLOCKS + 1 + i);
    }
    this.nowMs = this.startMs;
  }

  private mine(height = this.tipHeight() + 1) {
    const sorted = this.sortedMempool();
    const txs: SimTx[] = [];
    let vsize = 0;
    for (const tx of sorted) {
      if (vsize + tx.vsize > BLOCK_TX_VSIZE) continue;
      if (!this.index.parentsConfirmedOrIn(tx, this.mempool, txs)) continue;
      txs.push(tx);
      vsize += tx.vsize;
      if (vsize > BLOCK_TX_VSIZE - 110) break;
    }
    const mined = new Set(txs);
    for (const tx of txs) this.mempool.delete(tx.seq);
    this.sorted = sorted.filter((tx) => !mined.has(tx));
    const previous = this.blocks.at(-1);
    const totalFees = txs.reduce((sum, tx) => sum + tx.fee, 0);
    const feeRange = feeRangeOf(txs);
    const block: SimBlock = {
      hash: `0000000000000000000${this.hash(`block:${height}`).slice(0, 45)}`,
      height,
      previousHash: previous?.hash ?? `0000000000000000000${this.hash('genesis').slice(0, 45)}`,
      timestampMs: this.nowMs,
      txs,
      txCount: txs.length + 1,
      vsize: vsize + 200,
      weight: txs.reduce((sum, tx) => sum + tx.weight, 0) + 800,
      size: txs.reduce((sum, tx) => sum + tx.size, 0) + 250,
      totalFees,
      subsidy: subsidyAt(height),
      feeRange,
      medianFee: feeRange[3] ?? 0,
      avgFeeRate: vsize === 0 ? 0 : Math.floor(totalFees / vsize),
      pool: POOLS[this.rng.int(POOLS.length)]!,
      nonce: Math.floor(this.rng.next() * 4_294_967_296),
      merkleRoot: this.hash(`merkle:${height}`),
    };
    this.blocks.push(block);
    this.blockByHash.set(block.hash, block);
    for (const tx of txs) {
      this.confirmed.set(tx.seq, block);
      this.index.confirm(tx, block.height);
    }
    if (this.blocks.length > KEPT_BLOCKS) {
      const old = this.blocks[this.blocks.length - KEPT_BLOCKS - 1]!;
      for (const tx of old.txs) {
        this.confirmed.delete(tx.seq);
        this.index.forget(tx);
      }
      old.txs = [];
    }
  }

  /** Moves simulated time forward, processing arrivals and blocks in time order. */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError('advance(ms) needs ms ≥ 0');
    const target = this.nowMs + ms;
    for (;;) {
      const next = Math.min(this.nextArrivalMs, this.nextBlockMs);
      if (next > target) break;
      this.nowMs = next;
      if (this.nextBlockMs <= this.nextArrivalMs) {
        this.mine();
        this.nextBlockMs = this.nowMs + this.rng.exponential(MEAN_BLOCK_INTERVAL_MS);
      } else {
        this.addToMempool(this.makeTx(this.arrivalDistribution(), this.nowMs));
        this.nextArrivalMs = this.nowMs + this.rng.exponential(1000 / this.params.arrivalsPerSecond);
      }
    }
    this.nowMs = target;
  }

  /** Mines one block now (tests). */
  mineBlock(): SimBlock {
    this.mine();
    this.nextBlockMs = this.nowMs + this.rng.exponential(MEAN_BLOCK_INTERVAL_MS);
    return this.blocks.at(-1)!;
  }

  tipHeight(): number {
    return this.blocks.at(-1)?.height ?? SIM_START_HEIGHT - HISTORY_BLOCKS;
  }

  tip(): SimBlock {
    return this.blocks.at(-1)!;
  }

  blockByHeight(height: number): SimBlock | undefined {
    const first = this.blocks[0];
    return first ? this.blocks[height - first.height] : undefined;
  }

  findBlock(hash: string): SimBlock | undefined {
    return this.blockByHash.get(hash);
  }

  /** The bytes of a transaction (materialised once, then kept while the transaction is). */
  materialize(tx: SimTx): Material {
    return this.index.materialize(tx);
  }

  /** The txid of a transaction. */
  txidOfTx(tx: SimTx): string {
    return this.index.materialize(tx).txid;
  }

  /**
   * A transaction by txid, with its block when confirmed. Generated transactions are found once
   * materialised (every txid a client can learn — from a template, a block, a lookup — is).
   */
  findTx(txid: string): { tx: SimTx; block?: SimBlock } | undefined {
    const tx = this.index.byTxid(txid);
    if (!tx) return undefined;
    if (this.mempool.has(tx.seq)) return { tx };
    const block = this.confirmed.get(tx.seq);
    return block ? { tx, block } : undefined;
  }

  /** A block's transactions as bytes, the coinbase first (materialises them all). */
  blockTransactions(block: SimBlock): Material[] {
    return this.index.blockTransactions(block);
  }

  /** Accepts a transaction whose bytes and prevouts the mempool policy checked. */
  addExternal(material: Material, replaced: readonly SimTx[] = []): SimTx {
    for (const old of replaced) {
      this.index.recordReplacement(this.txidOfTx(old), material.txid);
      this.evict(old);
    }
    const tx: SimTx = {
      shape: { key: 'external', version: material.version, inputs: [], outputs: [], ...sizesOf(material) },
      ...sizesOf(material),
      fee: material.fee,
      rate: material.fee / material.vsize,
      seq: this.counter++,
      arrivalMs: this.nowMs,
      rbf: material.inputs.some((input) => input.sequence < 0xfffffffe),
      material,
    };
    this.index.addExternal(tx);
    this.addToMempool(tx);
    return tx;
  }

  /** Removes a replaced transaction (and whatever spends it) from the mempool. */
  private evict(tx: SimTx): void {
    for (const child of this.index.descendantsIn(tx, this.mempool)) this.evict(child);
    this.mempool.delete(tx.seq);
    this.sorted = this.sortedMempool().filter((t) => t !== tx);
    this.index.forget(tx, { evicted: true });
  }

  private addToMempool(tx: SimTx): void {
    this.mempool.set(tx.seq, tx);
    this.pending.push(tx);
    this.recent.push(tx);
    if (this.recent.length > 10) this.recent.shift();
  }

  /** The faucet's outputs nothing has spent yet (a broadcast spending one takes it out). */
  faucetOutputs(): SpendableOutput[] {
    const { funding } = this.faucet;
    const out: SpendableOutput[] = [];
    funding.outputs.forEach((output, vout) => {
      if (this.index.utxo(funding.txid, vout))
        out.push({ txid: funding.txid, vout, value: output.value, script: output.script });
    });
    return out;
  }

  /** The last transactions to arrive, newest first, that are still unconfirmed. */
  recentArrivals(): SimTx[] {
    return this.recent.filter((tx) => this.mempool.has(tx.seq)).reverse();
  }

  /** Sorted mempool: new arrivals are sorted alone and merged, so a block costs O(n), not O(n log n). */
  sortedMempool(): SimTx[] {
    if (this.pending.length > 0) {
      const merged = mergeByRate(this.sorted, this.pending.sort(byRateDesc));
      this.sorted = merged.filter((tx) => this.mempool.has(tx.seq));
      this.pending = [];
    }
    return this.sorted;
  }

  /** `/api/mempool`: count, vsize, total_fee and the fee histogram ([rate, vsize] by rate desc). */
  mempoolInfo() {
    return mempoolInfoOf(this.sortedMempool());
  }

  /** The mempool cut into projected blocks: up to 7 full blocks and an 8th "stack" holding the rest. */
  projectedBlockTxs(): SimTx[][] {
    return projectBlocks(this.sortedMempool());
  }

  /** Projected blocks as mempool.space's `/api/v1/fees/mempool-blocks`. */
  mempoolBlocks(): MempoolBlockView[] {
    return this.projectedBlockTxs().map(mempoolBlockView);
  }

  /** Recommended tiers the way mempool.space derives them ({@link recommendedFeesOf}). */
  recommendedFees(precise: boolean): RecommendedFees {
    return recommendedFeesOf(this.mempoolBlocks(), this.params.minRelayFee, precise);
  }

  /** Rate needed to confirm within `target` blocks ({@link estimateForTargetOf}). */
  estimateForTarget(target: number): number {
    const sorted = this.sortedMempool();
    return estimateForTargetOf(sorted, this.cumulativeVsize(), target, this.params.minRelayFee);
  }

  private cumulativeCache: { of: SimTx[]; values: Float64Array } | undefined;

  /**
   * Running vsize of the sorted mempool, computed once per state (every target reads it); every
   * change to the mempool replaces the sorted array, so the array itself is the cache key.
   */
  private cumulativeVsize(): Float64Array {
    const sorted = this.sortedMempool();
    if (this.cumulativeCache?.of !== sorted) {
      this.cumulativeCache = { of: sorted, values: cumulativeVsizeOf(sorted) };
    }
    return this.cumulativeCache.values;
  }

  /** Bitcoin Core's `estimatesmartfee` from the blocks already mined ({@link smartFeeOf}). */
  smartFee(target: number, mode: 'economical' | 'conservative'): number {
    return smartFeeOf(this.blocks, target, mode, this.params.minRelayFee);
  }

  /** Esplora `/fee-estimates` ({@link esploraFeeEstimates}). */
  feeEstimates(): Record<string, number> {
    return esploraFeeEstimates((target) => this.estimateForTarget(target), this.params.nonMonotonicEstimates);
  }
}

const sizesOf = (material: Material) => ({
  vsize: material.vsize,
  weight: material.weight,
  size: material.size,
});
