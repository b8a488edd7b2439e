import { coinbaseMaterial, materializeGenerated, witnessCommitment } from './transactions';
import type { Material, SimBlock, SimTx } from './types';

/** An output a transaction may spend: its script and value, and the height it confirmed at. */
export interface Utxo {
  script: Uint8Array;
  value: bigint;
  /** null while its transaction is unconfirmed. */
  height: number | null;
}

const outpoint = (txid: string, vout: number) => `${txid}:${vout}`;

/**
 * What the simulator knows by txid and outpoint: materialised transactions, the funding
 * transactions their inputs spend, the spendable outputs (the faucet's and those of broadcast
 * transactions) and which mempool transaction spends an outpoint (for RBF and CPFP).
 */
export class TransactionIndex {
  private readonly txids = new Map<string, SimTx>();
  private readonly fundings = new Map<string, Material>();
  private readonly coinbases = new Map<number, Material>();
  private readonly coinbaseHeights = new Map<string, number>();
  /** Spendable outputs by `txid:vout`. */
  readonly utxos = new Map<string, Utxo>();
  /** Outpoints spent by a broadcast transaction still unconfirmed or kept, with the spent output. */
  private readonly spent = new Map<string, { by: SimTx; utxo: Utxo }>();

  /** RBF history: each replaced txid → the txid of the transaction that replaced it. */
  readonly replacedBy = new Map<string, string>();
  /** The transactions each replacement replaced, by its txid. */
  readonly replaces = new Map<string, string[]>();

  constructor(private readonly seed: number) {}

  /** Records that `by` replaced `txid` (BIP 125 or full RBF): mempool.space's RBF tree. */
  recordReplacement(txid: string, by: string): void {
    this.replacedBy.set(txid, by);
    this.replaces.set(by, [...(this.replaces.get(by) ?? []), txid]);
  }

  /**
   * mempool.space's `/api/v1/tx/:txid/rbf`: `replacements` the RBF tree holding `txid`, rooted at
   * the latest replacement (each node `{tx: {txid}, replaces: [nodes]}`), `replaces` the txids it
   * replaced itself; both null when it was never replaced nor replaced anything.
   */
  rbfHistory(txid: string): { replacements: unknown; replaces: string[] | null } {
    let root = txid;
    while (this.replacedBy.has(root)) root = this.replacedBy.get(root)!;
    if (root === txid && !this.replaces.has(txid)) return { replacements: null, replaces: null };
    const node = (id: string): unknown => ({
      tx: { txid: id },
      replaces: (this.replaces.get(id) ?? []).map(node),
    });
    return { replacements: node(root), replaces: this.replaces.get(txid) ?? null };
  }

  materialize(tx: SimTx): Material {
    if (tx.material) return tx.material;
    const { material, fundings } = materializeGenerated(this.seed, tx.seq, tx.shape, tx.fee, tx.rbf);
    tx.material = material;
    this.txids.set(material.txid, tx);
    for (const funding of fundings) this.fundings.set(funding.txid, funding);
    return material;
  }

  byTxid(txid: string): SimTx | undefined {
    return this.txids.get(txid);
  }

  /** A funding transaction (what a generated transaction's input spends), once materialised. */
  funding(txid: string): Material | undefined {
    return this.fundings.get(txid);
  }

  utxo(txid: string, vout: number): Utxo | undefined {
    return this.utxos.get(outpoint(txid, vout));
  }

  /** The unconfirmed or kept broadcast transaction that spends an outpoint, if any. */
  spender(txid: string, vout: number): SimTx | undefined {
    return this.spent.get(outpoint(txid, vout))?.by;
  }

  /** The output a mempool transaction already spends (a replacement spends it again). */
  spentOutput(txid: string, vout: number): Utxo | undefined {
    return this.spent.get(outpoint(txid, vout))?.utxo;
  }

  /** Indexes a transaction with its own bytes: its inputs leave the spendable set, its outputs join it. */
  addExternal(tx: SimTx): void {
    const material = tx.material!;
    this.txids.set(material.txid, tx);
    for (const input of material.inputs) {
      const key = outpoint(input.txid, input.vout);
      const utxo = this.utxos.get(key);
      if (utxo) {
        this.utxos.delete(key);
        this.spent.set(key, { by: tx, utxo });
      }
    }
    material.outputs.forEach((output, vout) => {
      if (output.script[0] === 0x6a) return; // OP_RETURN is unspendable
      this.utxos.set(outpoint(material.txid, vout), {
        script: output.script,
        value: output.value,
        height: null,
      });
    });
  }

  /** Marks a transaction's outputs confirmed at `height`. */
  confirm(tx: SimTx, height: number): void {
    const material = tx.material;
    if (!material || tx.shape.key !== 'external') return;
    material.outputs.forEach((_, vout) => {
      const utxo = this.utxos.get(outpoint(material.txid, vout));
      if (utxo) utxo.height = height;
    });
  }

  /**
   * Drops a transaction from the index: a generated one's bytes (rebuilt on demand), an evicted
   * broadcast's outputs, and gives its inputs back to the spendable set when it never confirmed.
   */
  forget(tx: SimTx, options: { evicted?: boolean } = {}): void {
    const material = tx.material;
    if (!material) return;
    this.txids.delete(material.txid);
    if (tx.shape.key !== 'external') {
      for (const input of material.inputs) this.fundings.delete(input.txid);
      tx.material = undefined;
      return;
    }
    if (!options.evicted) return;
    material.outputs.forEach((_, vout) => {
      this.utxos.delete(outpoint(material.txid, vout));
    });
    for (const input of material.inputs) {
      const key = outpoint(input.txid, input.vout);
      const held = this.spent.get(key);
      if (held?.by === tx) {
        this.spent.delete(key);
        this.utxos.set(key, held.utxo);
      }
    }
  }

  /** Whether every parent of `tx` is confirmed or already chosen for the block being built. */
  parentsConfirmedOrIn(tx: SimTx, mempool: ReadonlyMap<number, SimTx>, chosen: readonly SimTx[]): boolean {
    if (tx.shape.key !== 'external') return true;
    for (const input of tx.material!.inputs) {
      const parent = this.txids.get(input.txid);
      if (parent && mempool.has(parent.seq) && !chosen.includes(parent)) return false;
    }
    return true;
  }

  /** The unconfirmed transactions spending an output of `tx`. */
  descendantsIn(tx: SimTx, mempool: ReadonlyMap<number, SimTx>): SimTx[] {
    const material = tx.material;
    if (!material) return [];
    const out: SimTx[] = [];
    material.outputs.forEach((_, vout) => {
      const child = this.spent.get(outpoint(material.txid, vout))?.by;
      if (child && mempool.has(child.seq)) out.push(child);
    });
    return out;
  }

  /** A block's transactions as bytes, coinbase first, the coinbase committing to their wtxids. */
  blockTransactions(block: SimBlock): Material[] {
    const txs = block.txs.map((tx) => this.materialize(tx));
    let coinbase = this.coinbases.get(block.height);
    if (!coinbase) {
      coinbase = coinbaseMaterial({
        seed: this.seed,
        height: block.height,
        reward: block.subsidy + block.totalFees,
        witnessCommitment: witnessCommitment(txs.map((tx) => tx.wtxid)),
      });
      this.coinbases.set(block.height, coinbase);
      this.coinbaseHeights.set(coinbase.txid, block.height);
    }
    return [coinbase, ...txs];
  }

  /** A coinbase by txid (of a block whose transactions were materialised), with its height. */
  coinbase(txid: string): { material: Material; height: number } | undefined {
    const height = this.coinbaseHeights.get(txid);
    return height === undefined ? undefined : { material: this.coinbases.get(height)!, height };
  }
}
