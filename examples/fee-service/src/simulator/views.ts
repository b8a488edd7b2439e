import * as btc from '@scure/btc-signer';
import { addressOf, esploraScriptType } from './output-scripts';
import type { Material, SimBlock } from './types';

/** Wire views of simulator state, in the exact shapes of mempool.space / Esplora / Core. */

const hexOf = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const btcAmount = (sats: bigint | number) => Number((Number(sats) / 1e8).toFixed(8));

/** Esplora's assembly: `OP_0 OP_PUSHBYTES_20 <hex>`. */
export function esploraAsm(script: Uint8Array): string {
  try {
    return btc.Script.decode(script)
      .map((op) => {
        if (op instanceof Uint8Array) {
          const push =
            op.length <= 75
              ? `OP_PUSHBYTES_${op.length}`
              : op.length <= 255
                ? 'OP_PUSHDATA1'
                : 'OP_PUSHDATA2';
          return op.length === 0 ? 'OP_0' : `${push} ${hexOf(op)}`;
        }
        if (typeof op === 'number')
          return op === 0 ? 'OP_0' : op === -1 ? 'OP_PUSHNUM_NEG1' : `OP_PUSHNUM_${op}`;
        return `OP_${op}`;
      })
      .join(' ');
  } catch {
    return '';
  }
}

/** Core's assembly: `0 <hex>`, `OP_RETURN <hex>`. */
export function coreAsm(script: Uint8Array): string {
  try {
    return btc.Script.decode(script)
      .map((op) => (op instanceof Uint8Array ? hexOf(op) : typeof op === 'number' ? String(op) : `OP_${op}`))
      .join(' ');
  } catch {
    return '[error]';
  }
}

const CORE_TYPES: Record<string, string> = {
  v0_p2wpkh: 'witness_v0_keyhash',
  v0_p2wsh: 'witness_v0_scripthash',
  v1_p2tr: 'witness_v1_taproot',
  p2pkh: 'pubkeyhash',
  p2sh: 'scripthash',
  p2pk: 'pubkey',
  multisig: 'multisig',
  op_return: 'nulldata',
  anchor: 'anchor',
};

function esploraOutput(output: { script: Uint8Array; value: bigint }) {
  const address = addressOf(output.script);
  return {
    scriptpubkey: hexOf(output.script),
    scriptpubkey_asm: esploraAsm(output.script),
    scriptpubkey_type: esploraScriptType(output.script),
    ...(address ? { scriptpubkey_address: address } : {}),
    value: Number(output.value),
  };
}

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
      coinbaseRaw: `03${(block.height & 0xffffff).toString(16).padStart(6, '0').match(/../g)!.reverse().join('')}`,
      matchRate: 100,
      expectedFees: block.totalFees,
      expectedWeight: block.weight,
    },
  };
}

/** Where a transaction is: in a block (height, hash, time), or unconfirmed. */
export type TxPlace = { block: { height: number; hash: string; timeMs: number } } | { block: undefined };

const isCoinbase = (material: Material) =>
  material.inputs.length === 1 &&
  material.inputs[0]!.txid === '00'.repeat(32) &&
  material.inputs[0]!.vout === 0xffffffff;

/** Esplora transaction (`/api/tx/:txid`) from its bytes: inputs with prevouts, outputs, status. */
export function esploraTx(material: Material, place: TxPlace) {
  const coinbase = isCoinbase(material);
  return {
    txid: material.txid,
    version: material.version,
    locktime: material.locktime,
    vin: material.inputs.map((input) => ({
      txid: input.txid,
      vout: input.vout,
      prevout: input.prevout ? esploraOutput(input.prevout) : null,
      scriptsig: hexOf(input.scriptSig),
      scriptsig_asm: coinbase ? '' : esploraAsm(input.scriptSig),
      witness: input.witness.map(hexOf),
      is_coinbase: coinbase,
      sequence: input.sequence,
    })),
    vout: material.outputs.map(esploraOutput),
    size: material.size,
    weight: material.weight,
    sigops: sigopsOf(material),
    fee: material.fee,
    status: place.block
      ? {
          confirmed: true,
          block_height: place.block.height,
          block_hash: place.block.hash,
          block_time: Math.floor(place.block.timeMs / 1000),
        }
      : { confirmed: false },
  };
}

/**
 * BIP 141 sigop cost, as Core counts it for the script types the simulator builds: 4 per legacy
 * CHECKSIG (P2PKH inputs and outputs), 1 per witness CHECKSIG, 3 for a 2-of-3 witness multisig.
 */
export function sigopsOf(material: Material): number {
  let cost = 0;
  for (const input of material.inputs) {
    if (!input.prevout) continue;
    const type = esploraScriptType(input.prevout.script);
    if (type === 'p2pkh') cost += 4;
    else if (type === 'v0_p2wpkh' || type === 'p2sh') cost += 1;
    else if (type === 'v0_p2wsh') cost += 3;
  }
  for (const output of material.outputs) if (esploraScriptType(output.script) === 'p2pkh') cost += 4;
  return cost;
}

/** Core's decoded transaction (`getrawtransaction txid 1`, `decoderawtransaction`). */
export function coreTx(material: Material, place: TxPlace, tipHeight: number) {
  const coinbase = isCoinbase(material);
  return {
    txid: material.txid,
    hash: material.wtxid,
    version: material.version,
    size: material.size,
    vsize: material.vsize,
    weight: material.weight,
    locktime: material.locktime,
    vin: material.inputs.map((input) =>
      coinbase
        ? {
            coinbase: hexOf(input.scriptSig),
            txinwitness: input.witness.map(hexOf),
            sequence: input.sequence,
          }
        : {
            txid: input.txid,
            vout: input.vout,
            scriptSig: { asm: coreAsm(input.scriptSig), hex: hexOf(input.scriptSig) },
            ...(input.witness.length > 0 ? { txinwitness: input.witness.map(hexOf) } : {}),
            sequence: input.sequence,
          },
    ),
    vout: material.outputs.map((output, n) => {
      const address = addressOf(output.script);
      return {
        value: btcAmount(output.value),
        n,
        scriptPubKey: {
          asm: coreAsm(output.script),
          hex: hexOf(output.script),
          ...(address ? { address } : {}),
          type: CORE_TYPES[esploraScriptType(output.script)] ?? 'nonstandard',
        },
      };
    }),
    hex: material.hex,
    ...(place.block
      ? {
          blockhash: place.block.hash,
          confirmations: tipHeight - place.block.height + 1,
          time: Math.floor(place.block.timeMs / 1000),
          blocktime: Math.floor(place.block.timeMs / 1000),
        }
      : {}),
  };
}

/** One transaction of Core's `getblocktemplate`. */
export function templateTransaction(material: Material, depends: number[]) {
  return {
    data: material.hex,
    txid: material.txid,
    hash: material.wtxid,
    depends,
    fee: material.fee,
    sigops: sigopsOf(material),
    weight: material.weight,
  };
}

/** mempool.space / Esplora `/api/mempool/recent` entry. */
export function recentEntry(material: Material) {
  return {
    txid: material.txid,
    fee: material.fee,
    vsize: material.vsize,
    value: Number(material.outputs.reduce((sum, o) => sum + o.value, 0n)),
  };
}
