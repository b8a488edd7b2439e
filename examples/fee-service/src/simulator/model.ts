import { createHash } from 'node:crypto';
import { createPrng, type Prng } from './prng';
import { SCENARIOS, type ScenarioName, type ScenarioParameters } from './scenarios';

/** Simulated time starts here (block timestamps), whatever the wall clock says. */
export const SIM_EPOCH_MS = Date.parse('2026-08-06T12:00:00Z');
/** Height of the tip when a simulation starts. */
export const SIM_START_HEIGHT = 910_000;
const BLOCK_VSIZE = 1_000_000;
/** Room left for the coinbase when filling a block. */
const BLOCK_TX_VSIZE = 999_000;
const MEAN_BLOCK_INTERVAL_MS = 600_000;
const HISTORY_BLOCKS = 16;
/** An odd multiplier and its inverse modulo 2^32 (txid first word ↔ counter). */
const TXID_MULTIPLIER = 0x2c1b3c6d;
const TXID_MULTIPLIER_INVERSE = modularInverse32(TXID_MULTIPLIER);

function modularInverse32(a: number): number {
  // Newton iteration: x ← x(2 − a x) doubles the correct low bits each round.
  let x = a;
  for (let i = 0; i < 5; i += 1) x = Math.imul(x, 2 - Math.imul(a, x));
  return x >>> 0;
}

export interface SimTx {
  /** Set for broadcast transactions only; generated ones derive it from `seq` (see txidOf). */
  externalTxid?: string;
  vsize: number;
  weight: number;
  size: number;
  /** Whole sats. */
  fee: number;
  /** fee / vsize, sat/vB. */
  rate: number;
  /** Order of arrival; breaks ties when sorting. */
  seq: number;
  arrivalMs: number;
  inputs: number;
  outputs: number;
}

export interface SimBlock {
  hash: string;
  height: number;
  previousHash: string;
  timestampMs: number;
  /** Transactions (emptied once the block is 200 deep, to bound memory). */
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

/** Block subsidy in sats: 50 BTC halved every 210,000 blocks. */
export function subsidyAt(height: number): number {
  const halvings = Math.floor(height / 210_000);
  return halvings >= 64 ? 0 : Math.floor(5_000_000_000 / 2 ** halvings);
}

/** Rate at a fraction of the vsize of a list sorted by rate descending. */
function rateAtVsizeFraction(sortedDesc: SimTx[], fraction: number): number {
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
function feeRangeOf(sortedDesc: SimTx[]): number[] {
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
 * answers.
 */
export class SimulationModel {
  readonly seed: number;
  scenarioName: ScenarioName;
  params: ScenarioParameters;
  nowMs = SIM_EPOCH_MS;
  private rng: Prng;
  private counter = 0;
  private mempool = new Map<number, SimTx>();
  private readonly external = new Map<string, number>();
  readonly blocks: SimBlock[] = [];
  private readonly blockByHash = new Map<string, SimBlock>();
  private readonly confirmed = new Map<number, { tx: SimTx; block: SimBlock }>();
  private nextArrivalMs = 0;
  private nextBlockMs = 0;
  private version = 0;
  /** The mempool sorted by rate, except `pending` arrivals not merged in yet. */
  private sorted: SimTx[] = [];
  private pending: SimTx[] = [];
  /** Outpoints spent by broadcast transactions (to answer "missing or spent"). */
  readonly spentOutpoints = new Set<string>();

  constructor(options: { seed: number; scenario: ScenarioName }) {
    this.seed = options.seed >>> 0;
    this.scenarioName = options.scenario;
    this.params = SCENARIOS[options.scenario];
    this.rng = createPrng(this.seed ^ 0x9e3779b9);
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
    this.version += 1;
  }

  /** A SHA-256 of the seed and a label: block hashes and merkle roots. */
  private hash(label: string): string {
    return createHash('sha256').update(`${this.seed}:${label}`).digest('hex');
  }

  /**
   * A txid-looking 64-hex from the seed and a counter. SHA-256 (or even building the string) per
   * transaction dominated start-up with tens of thousands of transactions, so txids are computed
   * only when asked for, and their first word is an invertible function of the counter
   * ({@link seqOfTxid}) so a lookup by txid needs no txid → transaction index.
   */
  txidOf(seq: number): string {
    let out = (Math.imul((seq ^ this.seed) >>> 0, TXID_MULTIPLIER) >>> 0).toString(16).padStart(8, '0');
    for (let i = 1; i < 8; i += 1) {
      let h = (this.seed ^ Math.imul(seq + 1, 0x9e3779b1) ^ Math.imul(i, 0x85ebca6b)) >>> 0;
      h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
      h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
      h ^= h >>> 16;
      h = Math.imul(h ^ seq, 0x27d4eb2f);
      h ^= h >>> 15;
      out += (h >>> 0).toString(16).padStart(8, '0');
    }
    return out;
  }

  /** The counter a simulator txid was made from (inverse of the first word of {@link txidOf}). */
  private seqOfTxid(txid: string): number {
    return (Math.imul(Number.parseInt(txid.slice(0, 8), 16), TXID_MULTIPLIER_INVERSE) ^ this.seed) >>> 0;
  }

  private drawRate(dist: { median: number; sigma: number }): number {
    return Math.max(this.params.minRelayFee, Math.min(5_000, this.rng.logNormal(dist.median, dist.sigma)));
  }

  private drawShape(): { vsize: number; inputs: number; outputs: number } {
    const u = this.rng.next();
    if (u < 0.55) return { vsize: 141, inputs: 1, outputs: 2 };
    if (u < 0.7) return { vsize: 110, inputs: 1, outputs: 1 };
    if (u < 0.85) return { vsize: 208, inputs: 2, outputs: 2 };
    if (u < 0.95) return { vsize: 250 + this.rng.int(450), inputs: 3, outputs: 3 };
    return { vsize: 1000 + this.rng.int(4000), inputs: 15, outputs: 2 };
  }

  private makeTx(dist: { median: number; sigma: number }, arrivalMs: number): SimTx {
    const shape = this.drawShape();
    const rate = this.drawRate(dist);
    const fee = Math.ceil(rate * shape.vsize);
    const seq = this.counter++;
    return {
      vsize: shape.vsize,
      weight: shape.vsize * 4 - 3,
      size: Math.round(shape.vsize * 1.57),
      fee,
      rate: fee / shape.vsize,
      seq,
      arrivalMs,
      inputs: shape.inputs,
      outputs: shape.outputs,
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
    this.version += 1;
  }

  private buildHistory() {
    // Blocks before the start, each filled from fresh draws, so /api/v1/blocks has 15+ real-looking entries.
    this.nowMs = SIM_EPOCH_MS - HISTORY_BLOCKS * MEAN_BLOCK_INTERVAL_MS;
    for (let i = 0; i < HISTORY_BLOCKS; i += 1) {
      this.nowMs += MEAN_BLOCK_INTERVAL_MS;
      this.fillMempool(0.97 * BLOCK_VSIZE, this.params.fees);
      this.mine(SIM_START_HEIGHT - HISTORY_BLOCKS + 1 + i);
    }
    this.nowMs = SIM_EPOCH_MS;
  }

  private mine(height = this.tipHeight() + 1) {
    const sorted = this.sortedMempool();
    const txs: SimTx[] = [];
    let vsize = 0;
    for (const tx of sorted) {
      if (vsize + tx.vsize > BLOCK_TX_VSIZE) continue;
      txs.push(tx);
      vsize += tx.vsize;
      if (vsize > BLOCK_TX_VSIZE - 110) break;
    }
    const mined = new Set(txs);
    for (const tx of txs) this.mempool.delete(tx.seq);
    this.sorted = sorted.filter((tx) => !mined.has(tx));
    const previous = this.blocks.at(-1);
    const totalFees = txs.reduce((sum, tx) => sum + tx.fee, 0);
    const subsidy = subsidyAt(height);
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
      subsidy,
      feeRange,
      medianFee: feeRange[3] ?? 0,
      avgFeeRate: vsize === 0 ? 0 : Math.floor(totalFees / vsize),
      pool: POOLS[this.rng.int(POOLS.length)]!,
      nonce: Math.floor(this.rng.next() * 4_294_967_296),
      merkleRoot: this.hash(`merkle:${height}`),
    };
    this.blocks.push(block);
    this.blockByHash.set(block.hash, block);
    for (const tx of txs) this.confirmed.set(tx.seq, { tx, block });
    // keep confirmed lookups for the last 200 blocks only
    if (this.blocks.length > 200) {
      const old = this.blocks[this.blocks.length - 201]!;
      for (const tx of old.txs) {
        this.confirmed.delete(tx.seq);
        if (tx.externalTxid) this.external.delete(tx.externalTxid);
      }
      old.txs = [];
    }
    this.version += 1;
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

  /** The txid of a transaction. */
  txidOfTx(tx: SimTx): string {
    return tx.externalTxid ?? this.txidOf(tx.seq);
  }

  findTx(txid: string): { tx: SimTx; block?: SimBlock } | undefined {
    if (!/^[0-9a-f]{64}$/.test(txid)) return undefined;
    const external = this.external.get(txid);
    const seq = external ?? this.seqOfTxid(txid);
    const pending = this.mempool.get(seq);
    const found = pending ? { tx: pending } : this.confirmed.get(seq);
    if (!found || this.txidOfTx(found.tx) !== txid) return undefined;
    return found;
  }

  /** Adds a broadcast transaction to the mempool at the minimum relay rate. */
  acceptTx(txid: string, vsize: number, weight: number, size: number): void {
    const fee = Math.ceil(this.params.minRelayFee * vsize);
    const seq = this.counter++;
    this.external.set(txid, seq);
    this.addToMempool({
      externalTxid: txid,
      vsize,
      weight,
      size,
      fee,
      rate: fee / vsize,
      seq,
      arrivalMs: this.nowMs,
      inputs: 1,
      outputs: 1,
    });
    this.version += 1;
  }

  private addToMempool(tx: SimTx): void {
    this.mempool.set(tx.seq, tx);
    this.pending.push(tx);
    this.version += 1;
  }

  /** Sorted mempool: new arrivals are sorted alone and merged, so a block costs O(n), not O(n log n). */
  private sortedMempool(): SimTx[] {
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
      this.sorted = merged;
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

  /** Projected blocks: up to 7 full blocks and an 8th "stack" holding the rest. */
  mempoolBlocks(): MempoolBlockView[] {
    const sorted = this.sortedMempool();
    const groups: SimTx[][] = [];
    let current: SimTx[] = [];
    let vsize = 0;
    for (const tx of sorted) {
      if (groups.length < 7 && vsize + tx.vsize > BLOCK_VSIZE && current.length > 0) {
        groups.push(current);
        current = [];
        vsize = 0;
      }
      current.push(tx);
      vsize += tx.vsize;
    }
    if (current.length > 0) groups.push(current);
    return groups.map((txs) => {
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
    const budget = target * BLOCK_VSIZE;
    let acc = 0;
    for (const tx of sorted) {
      acc += tx.vsize;
      if (acc > budget) return round3(Math.max(this.params.minRelayFee, tx.rate * 1.01));
    }
    return round3(this.params.minRelayFee);
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
