import * as btc from '@scure/btc-signer';
import type { SimBlock, SimTx } from './model';
import { createPrng } from './prng';

/** Wire views of simulator state, in the exact shapes of mempool.space / Esplora / Core. */

const hexOf = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

/** Esplora block (`/api/block/:hash`). */
export function esploraBlock(block: SimBlock) {
  return {
    id: block.hash,
    height: block.height,
    version: 0x20000000 | (block.height % 8),
    timestamp: Math.floor(block.timestampMs / 1000),
    tx_count: block.txCount,
    size: block.size,
    weight: block.weight,
    merkle_root: block.merkleRoot,
    previousblockhash: block.previousHash,
    mediantime: Math.floor(block.timestampMs / 1000) - 3000,
    nonce: block.nonce,
    bits: 386_042_081,
    difficulty: 126_411_437_451_912.2,
  };
}

/** mempool.space `/api/v1/blocks` entry: the Esplora block plus `extras`. */
export function blockWithExtras(block: SimBlock) {
  return {
    ...esploraBlock(block),
    extras: {
      totalFees: block.totalFees,
      medianFee: block.medianFee,
      feeRange: block.feeRange,
      reward: block.subsidy + block.totalFees,
      pool: block.pool,
      avgFee: block.txCount > 1 ? Math.floor(block.totalFees / (block.txCount - 1)) : 0,
      avgFeeRate: block.avgFeeRate,
      coinbaseRaw:
        '03' + (block.height & 0xffffff).toString(16).padStart(6, '0').match(/../g)!.reverse().join(''),
      matchRate: 100,
      expectedFees: block.totalFees,
      expectedWeight: block.weight,
    },
  };
}

/**
 * Esplora transaction (`/api/tx/:txid`). Inputs and outputs are drawn from a generator seeded by
 * the txid, so the same transaction always reads the same; inputs sum to outputs + fee.
 */
export function esploraTx(txid: string, tx: SimTx, block: SimBlock | undefined) {
  const rng = createPrng(Number.parseInt(txid.slice(8, 16), 16));
  const randomHash20 = () => Uint8Array.from({ length: 20 }, () => rng.int(256));
  const output = (value: number) => {
    const hash = randomHash20();
    return {
      scriptpubkey: hexOf(btc.OutScript.encode({ type: 'wpkh', hash })),
      scriptpubkey_asm: `OP_0 OP_PUSHBYTES_20 ${hexOf(hash)}`,
      scriptpubkey_type: 'v0_p2wpkh',
      scriptpubkey_address: btc.Address(btc.NETWORK).encode({ type: 'wpkh', hash }),
      value,
    };
  };
  const vout = Array.from({ length: tx.outputs }, () => output(10_000 + rng.int(50_000_000)));
  const totalIn = vout.reduce((sum, o) => sum + o.value, 0) + tx.fee;
  const vin = Array.from({ length: tx.inputs }, (_, i) => {
    const share =
      i === tx.inputs - 1
        ? totalIn - Math.floor(totalIn / tx.inputs) * (tx.inputs - 1)
        : Math.floor(totalIn / tx.inputs);
    return {
      txid: Buffer.from(Array.from({ length: 32 }, () => rng.int(256))).toString('hex'),
      vout: rng.int(3),
      prevout: output(share),
      scriptsig: '',
      scriptsig_asm: '',
      witness: [`30440220${'ab'.repeat(32)}0220${'cd'.repeat(32)}01`, `02${'ef'.repeat(32)}`],
      is_coinbase: false,
      sequence: rng.next() < 0.3 ? 0xfffffffd : 0xffffffff,
    };
  });
  return {
    txid,
    version: 2,
    locktime: 0,
    vin,
    vout,
    size: tx.size,
    weight: tx.weight,
    sigops: tx.inputs,
    fee: tx.fee,
    status: block
      ? {
          confirmed: true,
          block_height: block.height,
          block_hash: block.hash,
          block_time: Math.floor(block.timestampMs / 1000),
        }
      : { confirmed: false },
  };
}

/** Result of the basic pre-acceptance check of a broadcast. */
export type BroadcastCheck =
  | { ok: true; txid: string; vsize: number; weight: number; size: number; outpoints: string[] }
  | { ok: false; code: number; message: string };

/**
 * Basic checks a node would make on raw hex: decodes, has inputs and outputs, no dust output.
 * Inputs cannot be checked against a UTXO set here; a spend of an outpoint an earlier broadcast
 * spent answers -25.
 */
export function checkRawTransaction(
  hex: string,
  spent: ReadonlySet<string>,
  confirmed: (txid: string) => boolean,
): BroadcastCheck {
  const clean = hex.trim();
  if (!/^([0-9a-fA-F]{2})+$/.test(clean)) {
    return { ok: false, code: -22, message: 'TX decode failed. Make sure the tx has at least one input.' };
  }
  let tx: btc.Transaction;
  try {
    tx = btc.Transaction.fromRaw(Buffer.from(clean, 'hex'), {
      allowUnknownOutputs: true,
      allowUnknownInputs: true,
      disableScriptCheck: true,
      allowLegacyWitnessUtxo: true,
    });
  } catch {
    return { ok: false, code: -22, message: 'TX decode failed. Make sure the tx has at least one input.' };
  }
  if (tx.inputsLength === 0 || tx.outputsLength === 0) {
    return { ok: false, code: -22, message: 'TX decode failed. Make sure the tx has at least one input.' };
  }
  const txid = tx.id;
  if (confirmed(txid)) return { ok: false, code: -27, message: 'Transaction already in block chain' };
  const outpoints: string[] = [];
  for (let i = 0; i < tx.inputsLength; i += 1) {
    const input = tx.getInput(i);
    const outpoint = `${hexOf(input.txid ?? new Uint8Array())}:${input.index}`;
    if (spent.has(outpoint)) return { ok: false, code: -25, message: 'bad-txns-inputs-missingorspent' };
    outpoints.push(outpoint);
  }
  for (let i = 0; i < tx.outputsLength; i += 1) {
    const out = tx.getOutput(i);
    const script = out.script ?? new Uint8Array();
    const isOpReturn = script[0] === 0x6a;
    if (!isOpReturn && (out.amount ?? 0n) < 294n) return { ok: false, code: -26, message: 'dust' };
  }
  const size = clean.length / 2;
  let weight = size * 4;
  try {
    weight = tx.weight;
  } catch {
    // not finalized (no witness): weight is 4 × size
  }
  return { ok: true, txid, vsize: Math.ceil(weight / 4), weight, size, outpoints };
}
