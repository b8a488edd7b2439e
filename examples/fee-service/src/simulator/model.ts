import { createHash } from 'node:crypto';
import { subsidyAt } from '../domain/chain';
import { createPrng, type Prng } from './prng';
import { SCENARIOS, type ScenarioName, type ScenarioParameters } from './scenarios';
import { drawShape, type Material, type TxShape } from './transactions';
import { TransactionIndex } from './tx-index';
import { createFaucet, type Faucet, type SpendableOutput } from './wallet';

/** Simulated time starts here (block timestamps), whatever the wall clock says. */
export const SIM_EPOCH_MS = Date.parse('2026-08-06T12:00:00Z');
/** Height of the tip when a simulation starts. */
export const SIM_START_HEIGHT = 910_000;
const BLOCK_VSIZE = 1_000_000;
/** Room left for the coinbase when filling a block. */
const BLOCK_TX_VSIZE = 999_000;
const MEAN_BLOCK_INTERVAL_MS = 600_000;
const HISTORY_BLOCKS = 16;
/** Blocks whose transactions are kept (older blocks keep their header and statistics only). */
const KEPT_BLOCKS = 200;

export interface SimTx {
  /** Inputs and outputs by script type, and the exact sizes they give. */
  shape: TxShape;
  vsize: number;
  weight: number;
  size: number;
  /** Whole sats. */
  fee: number;
  /** fee / vsize, sat/vB. */
  rate: number;
  /** Order of arrival; breaks ties when sorting, and seeds the transaction's bytes. */
  seq: number;
  arrivalMs: number;
  /** Signals BIP 125 replaceability (sequence below 0xfffffffe). */
  rbf: boolean;
  /** The bytes: a broadcast's own from the start, a generated one's once materialised. */
  material?: Material;
}

export interface SimBlock {
  hash: string;
  height: number;
  previousHash: string;
  timestampMs: number;
  /** Transactions without the coinbase (emptied once the block is 200 deep, to bound memory). */
  txs: SimTx[];
  /** Transaction count including the coinbase. */
  txCount: number;
  vsize: number;
  weight: number;
  size: number;
  totalFees: number;
  subsidy: number;
  /** [min, p10, p25, p50, p75, p90, max] by vsize, sat/vB. */
  feeRange: number[];
  medianFee: number;
  avgFeeRate: number;
  pool: { id: number; name: string; slug: string };
  nonce: number;
  merkleRoot: string;
}

const POOLS = [
  { id: 111, name: 'Foundry USA', slug: 'foundryusa' },
  { id: 112, name: 'AntPool', slug: 'antpool' },
  { id: 115, name: 'ViaBTC', slug: 'viabtc' },
  { id: 36, name: 'F2Pool', slug: 'f2pool' },
  { id: 49, name: 'MARA Pool', slug: 'marapool' },
  { id: 43, name: 'SpiderPool', slug: 'spiderpool' },
] as const;

const ceil3 = (x: number) => Math.ceil(x * 1000 - 1e-6) / 1000;
const round3 = (x: number) => Math.round(x * 1000) / 1000;

export { subsidyAt };

/** Rate at a fraction of the vsize of a list sorted by rate descending. */
function rateAtVsizeFraction(sortedDesc: readonly SimTx[], fraction: number): number {
  const total = sortedDesc.reduce((sum, tx) => sum + tx.vsize, 0);
  const target = total * fraction;
  let acc = 0;
  for (const tx of sortedDesc) {
    acc += tx.vsize;
    if (acc >= target) return tx.rate;
  }
  return sortedDesc.at(-1)?.rate ?? 0;
}

/** [min, p10, p25, p50, p75, p90, max] of a block's rates, by vsize (low to high). */
export function feeRangeOf(sortedDesc: readonly SimTx[]): number[] {
  if (sortedDesc.length === 0) return [];
  const pct = (p: number) => rateAtVsizeFraction(sortedDesc, 1 - p);
  return [sortedDesc.at(-1)!.rate, pct(0.1), pct(0.25), pct(0.5), pct(0.75), pct(0.9), sortedDesc[0]!.rate];
}

const byRateDesc = (a: SimTx, b: SimTx) => b.rate - a.rate || a.seq - b.seq;

/** mempool.space's recommended-fee shape. */
export interface RecommendedFees {
  fastestFee: number;
  halfHourFee: number;
  hourFee: number;
  economyFee: number;
  minimumFee: number;
}

export interface MempoolBlockView {
  blockSize: number;
  blockVSize: number;
  nTx: number;
  totalFees: number;
  medianFee: number;
  feeRange: number[];
}

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
    for (const old of replaced) this.evict(old);
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
      const incoming = this.pending.sort(byRateDesc);
      const merged: SimTx[] = new Array(this.sorted.length + incoming.length);
      let i = 0;
      let j = 0;
      let k = 0;
      while (i < this.sorted.length && j < incoming.length) {
        merged[k++] = byRateDesc(this.sorted[i]!, incoming[j]!) <= 0 ? this.sorted[i++]! : incoming[j++]!;
      }
      while (i < this.sorted.length) merged[k++] = this.sorted[i++]!;
      while (j < incoming.length) merged[k++] = incoming[j++]!;
      this.sorted = merged.filter((tx) => this.mempool.has(tx.seq));
      this.pending = [];
    }
    return this.sorted;
  }

  /** `/api/mempool`: count, vsize, total_fee and the fee histogram ([rate, vsize] by rate desc). */
  mempoolInfo() {
    const sorted = this.sortedMempool();
    const vsize = sorted.reduce((sum, tx) => sum + tx.vsize, 0);
    const totalFee = sorted.reduce((sum, tx) => sum + tx.fee, 0);
    const histogram: [number, number][] = [];
    // mempool/electrs buckets: a new bucket every ~100,000 vB, labelled by its lowest rate
    let bucketVsize = 0;
    for (const tx of sorted) {
      bucketVsize += tx.vsize;
      if (bucketVsize >= 100_000) {
        histogram.push([round3(tx.rate), bucketVsize]);
        bucketVsize = 0;
      }
    }
    if (bucketVsize > 0 && sorted.length > 0) histogram.push([round3(sorted.at(-1)!.rate), bucketVsize]);
    return { count: sorted.length, vsize, total_fee: totalFee, fee_histogram: histogram };
  }

  /** The mempool cut into projected blocks: up to 7 full blocks and an 8th "stack" holding the rest. */
  projectedBlockTxs(): SimTx[][] {
    const sorted = this.sortedMempool();
    const groups: SimTx[][] = [];
    let current: SimTx[] = [];
    let vsize = 0;
    for (const tx of sorted) {
      if (groups.length < 7 && vsize + tx.vsize > BLOCK_TX_VSIZE && current.length > 0) {
        groups.push(current);
        current = [];
        vsize = 0;
      }
      current.push(tx);
      vsize += tx.vsize;
    }
    if (current.length > 0) groups.push(current);
    return groups;
  }

  /** Projected blocks as mempool.space's `/api/v1/fees/mempool-blocks`. */
  mempoolBlocks(): MempoolBlockView[] {
    return this.projectedBlockTxs().map((txs) => {
      const range = feeRangeOf(txs);
      return {
        blockSize: txs.reduce((sum, tx) => sum + tx.size, 0),
        blockVSize: txs.reduce((sum, tx) => sum + tx.vsize, 0),
        nTx: txs.length,
        totalFees: txs.reduce((sum, tx) => sum + tx.fee, 0),
        medianFee: range[3] ?? 0,
        feeRange: range,
      };
    });
  }

  /**
   * Recommended tiers the way mempool.space derives them from its projected blocks: the median
   * of block 1, 2, 3 smoothed with the previous tier, a nearly empty block counting as the floor,
   * economy capped at twice the minimum, then forced monotonic. `precise` keeps three decimals
   * (and a floor at the relay fee, possibly below 1); otherwise rates round up to integers ≥ 1.
   */
  recommendedFees(precise: boolean): RecommendedFees {
    const round = precise ? ceil3 : Math.ceil;
    const minimumFee = precise
      ? ceil3(this.params.minRelayFee)
      : Math.max(1, Math.ceil(this.params.minRelayFee));
    const floor = precise ? minimumFee : Math.max(minimumFee, 1);
    const blocks = this.mempoolBlocks();
    const optimise = (block: MempoolBlockView, next: MempoolBlockView | undefined, previous?: number) => {
      const use = previous === undefined ? block.medianFee : (block.medianFee + previous) / 2;
      if (block.blockVSize <= 500_000) return floor;
      if (block.blockVSize <= 950_000 && !next) {
        return Math.max(round((use * (block.blockVSize - 500_000)) / 500_000), floor);
      }
      return Math.max(round(use), floor);
    };
    if (blocks.length === 0) {
      return { fastestFee: floor, halfHourFee: floor, hourFee: floor, economyFee: minimumFee, minimumFee };
    }
    const first = optimise(blocks[0]!, blocks[1]);
    const second = blocks[1] ? optimise(blocks[1], blocks[2], first) : floor;
    const third = blocks[2] ? optimise(blocks[2], blocks[3], second) : floor;
    const economy = Math.max(minimumFee, Math.min(2 * minimumFee, third));
    const hour = Math.max(third, economy);
    const halfHour = Math.max(second, hour);
    const fastest = Math.max(first, halfHour);
    const fix = precise ? round3 : (x: number) => x;
    return {
      fastestFee: fix(fastest),
      halfHourFee: fix(halfHour),
      hourFee: fix(hour),
      economyFee: fix(economy),
      minimumFee: fix(minimumFee),
    };
  }

  /**
   * Rate needed to confirm within `target` blocks: the lowest rate inside the first `target`
   * million vB, a little above it, or the relay floor when the mempool fits.
   */
  estimateForTarget(target: number): number {
    const sorted = this.sortedMempool();
    const cumulative = this.cumulativeVsize();
    const budget = target * BLOCK_VSIZE;
    // first transaction whose cumulative vsize passes the budget (binary search)
    let lo = 0;
    let hi = cumulative.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cumulative[mid]! > budget) hi = mid;
      else lo = mid + 1;
    }
    if (lo >= sorted.length) return round3(this.params.minRelayFee);
    return round3(Math.max(this.params.minRelayFee, sorted[lo]!.rate * 1.01));
  }

  private cumulativeCache: { of: SimTx[]; values: Float64Array } | undefined;

  /**
   * Running vsize of the sorted mempool, computed once per state (every target reads it); every
   * change to the mempool replaces the sorted array, so the array itself is the cache key.
   */
  private cumulativeVsize(): Float64Array {
    const sorted = this.sortedMempool();
    if (this.cumulativeCache?.of !== sorted) {
      const values = new Float64Array(sorted.length);
      let acc = 0;
      for (let i = 0; i < sorted.length; i += 1) {
        acc += sorted[i]!.vsize;
        values[i] = acc;
      }
      this.cumulativeCache = { of: sorted, values };
    }
    return this.cumulativeCache.values;
  }

  /**
   * Bitcoin Core's `estimatesmartfee` as the simulator models it: from the blocks already mined,
   * not from the mempool, as Core does. `economical` averages, with a short half-life, the rate
   * that got into recent blocks at a depth that shrinks with the target (the median for 1 block,
   * down to the block's minimum from 12): smooth, and late both ways when fees move. `conservative`
   * also looks over a long half-life one quantile higher and keeps the larger, plus a margin: it
   * rarely misses and overpays.
   */
  smartFee(target: number, mode: 'economical' | 'conservative'): number {
    // feeRange indices: 0 min, 1 p10, 2 p25, 3 p50, 4 p75, 5 p90, 6 max
    const index = target <= 1 ? 3 : target === 2 ? 2 : target <= 6 ? 1 : 0;
    const economical = this.decayedBlockRate(index, 6);
    const rate =
      mode === 'economical'
        ? economical
        : Math.max(economical, this.decayedBlockRate(Math.min(6, index + 1), 48)) * 1.15;
    return round3(Math.max(this.params.minRelayFee, rate));
  }

  /** Mean of a feeRange entry over recent blocks, each weighted by 2^(−age / halfLife). */
  private decayedBlockRate(index: number, halfLife: number): number {
    let weighted = 0;
    let weights = 0;
    for (let i = this.blocks.length - 1, age = 0; i >= 0 && age < 4 * halfLife; i -= 1, age += 1) {
      const rate = this.blocks[i]!.feeRange[index];
      if (rate === undefined) continue;
      const weight = 2 ** (-age / halfLife);
      weighted += weight * rate;
      weights += weight;
    }
    return weights === 0 ? this.params.minRelayFee : weighted / weights;
  }

  /** Esplora `/fee-estimates` with its real gaps (some targets missing) and, per scenario, a non-monotonic entry. */
  feeEstimates(): Record<string, number> {
    const targets = [...Array.from({ length: 25 }, (_, i) => i + 1), 144, 504, 1008].filter(
      (t) => ![11, 14, 17, 19, 22].includes(t),
    );
    const out: Record<string, number> = {};
    for (const t of targets) out[String(t)] = this.estimateForTarget(t);
    if (this.params.nonMonotonicEstimates && out['2'] !== undefined) {
      out['3'] = round3(out['2'] * 1.05 + 0.5);
    }
    return out;
  }
}

const sizesOf = (material: Material) => ({
  vsize: material.vsize,
  weight: material.weight,
  size: material.size,
});
