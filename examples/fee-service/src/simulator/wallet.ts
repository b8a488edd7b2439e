import { createHash } from 'node:crypto';
import * as btc from '@scure/btc-signer';
import { pubECDSA } from '@scure/btc-signer/utils.js';
import { materialOf } from './transactions';
import type { Material } from './types';

/** How many confirmed outputs the faucet has, and their values: 20,000 sats + k × 97,000. */
export const FAUCET_OUTPUTS = 64;
const faucetValue = (k: number) => BigInt(20_000 + k * 97_000);

/**
 * A key the simulator pays in its first block: tests and demos build and sign real transactions
 * with @scure/btc-signer spending its outputs, and broadcast them (the simulator checks inputs,
 * fees and policy against these prevouts). Derived from the seed, so the same seed has the same
 * key and outputs; a devnet-grade secret, never a real one.
 */
export interface Faucet {
  privateKey: Uint8Array;
  publicKey: Uint8Array;
  /** P2WPKH output script of the key. */
  script: Uint8Array;
  /** Its mainnet bech32 address. */
  address: string;
  /** The transaction paying the faucet's outputs (confirmed in the simulation's first block). */
  funding: Material;
}

export function createFaucet(seed: number): Faucet {
  const privateKey = createHash('sha256').update(`faucet:${seed}`).digest();
  const publicKey = pubECDSA(privateKey);
  const payment = btc.p2wpkh(publicKey);
  const funding = materialOf({
    version: 2,
    inputs: [
      {
        txid: createHash('sha256').update(`faucet-source:${seed}`).digest('hex'),
        vout: 0,
        sequence: 0xffffffff,
        scriptSig: new Uint8Array(0),
        witness: [new Uint8Array(72).fill(0x30), Uint8Array.of(0x02, ...new Uint8Array(32).fill(7))],
        prevout: null,
      },
    ],
    outputs: Array.from({ length: FAUCET_OUTPUTS }, (_, k) => ({
      script: payment.script,
      value: faucetValue(k),
    })),
    locktime: 0,
  });
  return { privateKey, publicKey, script: payment.script, address: payment.address!, funding };
}

/** An output the faucet can spend, with what a signer needs (`witnessUtxo`). */
export interface SpendableOutput {
  txid: string;
  vout: number;
  value: bigint;
  script: Uint8Array;
}

/**
 * Builds and signs (real ECDSA, BIP 143) a P2WPKH transaction spending `inputs` of the faucet's
 * key to `outputs`; the change, if any, goes back to the faucet. Returns the raw hex.
 * @example signFaucetSpend(sim.model.faucet, [utxo], [{ script, value: 10_000n }])
 */
export function signFaucetSpend(
  faucet: Faucet,
  inputs: readonly SpendableOutput[],
  outputs: ReadonlyArray<{ script: Uint8Array; value: bigint }>,
  options: { sequence?: number; version?: number } = {},
): string {
  const tx = new btc.Transaction({ allowUnknownOutputs: true, version: options.version ?? 2 });
  for (const input of inputs) {
    tx.addInput({
      txid: input.txid,
      index: input.vout,
      witnessUtxo: { script: input.script, amount: input.value },
      sequence: options.sequence ?? 0xfffffffd,
    });
  }
  for (const output of outputs) tx.addOutput({ script: output.script, amount: output.value });
  tx.sign(faucet.privateKey);
  tx.finalize();
  return tx.hex;
}
