import type { SimulationModel } from './model';
import type { Material } from './types';
import type { TxPlace } from './views';

/**
 * A transaction by txid, wherever the simulator knows it from: the mempool or a kept block, a
 * funding transaction a generated input spends (confirmed just before the simulated chain begins),
 * or a block's coinbase.
 */
export function lookupTransaction(
  model: SimulationModel,
  txid: string,
): { material: Material; place: TxPlace } | undefined {
  const found = model.findTx(txid);
  if (found) {
    const material = model.materialize(found.tx);
    return found.block
      ? {
          material,
          place: {
            block: { height: found.block.height, hash: found.block.hash, timeMs: found.block.timestampMs },
          },
        }
      : { material, place: { block: undefined } };
  }
  if (txid === model.faucet.funding.txid) {
    // The faucet's funding stays known after its block's transactions are pruned (KEPT_BLOCKS):
    // npm start's history runs past them, and `npm run test-tx` looks the faucet up by it.
    const first = model.blocks[0]!;
    return {
      material: model.faucet.funding,
      place: { block: { height: first.height, hash: first.hash, timeMs: first.timestampMs } },
    };
  }
  const funding = model.index.funding(txid);
  if (funding) {
    const first = model.blocks[0]!;
    return {
      material: funding,
      place: {
        block: { height: first.height - 1, hash: first.previousHash, timeMs: first.timestampMs - 600_000 },
      },
    };
  }
  const coinbase = model.index.coinbase(txid);
  if (coinbase) {
    const block = model.blockByHeight(coinbase.height);
    if (block) {
      return {
        material: coinbase.material,
        place: { block: { height: block.height, hash: block.hash, timeMs: block.timestampMs } },
      };
    }
  }
  return undefined;
}

/** The transactions of the projected next block, each with the indices (1-based) of its parents in it. */
export function templateOf(model: SimulationModel): Array<{ material: Material; depends: number[] }> {
  const group = model.projectedBlockTxs()[0] ?? [];
  const position = new Map<string, number>();
  return group.map((tx, i) => {
    const material = model.materialize(tx);
    position.set(material.txid, i + 1);
    const depends = material.inputs
      .map((input) => position.get(input.txid))
      .filter((index): index is number => index !== undefined);
    return { material, depends };
  });
}
