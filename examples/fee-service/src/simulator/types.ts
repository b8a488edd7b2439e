// The simulator's shapes, below everything else in it: a transaction's layout and bytes
// (transactions.ts builds them), a mempool transaction and a mined block (model.ts keeps them,
// tx-index.ts indexes them), and the fee views mempool.space serves (fee-estimates.ts).

export type InputKind = 'p2wpkh' | 'p2tr' | 'p2pkh' | 'p2sh-p2wpkh' | 'p2wsh';
export type OutputKind = 'p2wpkh' | 'p2tr' | 'p2pkh' | 'p2sh' | 'p2wsh' | 'op_return' | 'p2a';

/** A transaction's layout: version, input and output script types, and its exact sizes. */
export interface TxShape {
  key: string;
  version: number;
  inputs: readonly InputKind[];
  outputs: readonly OutputKind[];
  /** Serialised size with witness, bytes. */
  size: number;
  /** BIP 141 weight: stripped size × 3 + full size. */
  weight: number;
  /** ceil(weight / 4). */
  vsize: number;
}

/** One input of a materialised transaction, with the output it spends (none for a coinbase). */
export interface MaterialInput {
  txid: string;
  vout: number;
  sequence: number;
  scriptSig: Uint8Array;
  witness: Uint8Array[];
  prevout: { script: Uint8Array; value: bigint } | null;
}

/** A transaction as bytes and parts. */
export interface Material {
  txid: string;
  wtxid: string;
  /** Full serialisation (with witness), hex. */
  hex: string;
  version: number;
  locktime: number;
  size: number;
  weight: number;
  vsize: number;
  inputs: MaterialInput[];
  outputs: Array<{ script: Uint8Array; value: bigint }>;
  /** Inputs minus outputs, sats; 0 for a coinbase. */
  fee: number;
}

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
