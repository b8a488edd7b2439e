import * as btc from '@scure/btc-signer';
import { describe, expect, it } from 'vitest';
import { buildRawTx } from '../../../../test/fixtures/raw-tx';
import { createFaucet, signFaucetSpend } from '../../../simulator/wallet';
import { inspectTransaction, MAX_HEX_CHARS } from './inspect';

const faucet = createFaucet(1);
const spend = (outputs = [{ script: faucet.script, value: 10_000n }], vouts = [0]) =>
  signFaucetSpend(
    faucet,
    vouts.map((vout) => ({
      txid: faucet.funding.txid,
      vout,
      value: faucet.funding.outputs[vout]!.value,
      script: faucet.script,
    })),
    outputs,
  );

/** A raw transaction from parts, with whatever they hold (the checks' bad cases). */
function raw(parts: {
  version?: number;
  inputs?: Array<{ txid: string; index: number }>;
  outputs?: Array<{ amount: bigint; script: Uint8Array }>;
  scriptSigBytes?: number;
}) {
  return Buffer.from(
    btc.RawTx.encode({
      version: parts.version ?? 2,
      segwitFlag: false,
      inputs: (parts.inputs ?? [{ txid: '11'.repeat(32), index: 0 }]).map((i) => ({
        txid: Buffer.from(i.txid, 'hex'),
        index: i.index,
        finalScriptSig: new Uint8Array(parts.scriptSigBytes ?? 0),
        sequence: 0xffffffff,
      })),
      outputs: parts.outputs ?? [{ amount: 10_000n, script: faucet.script }],
      witnesses: undefined,
      lockTime: 0,
    }),
  ).toString('hex');
}

describe('inspectTransaction', () => {
  it('accepts a signed SegWit transaction and gives the txid, wtxid and sizes btc-signer computes', () => {
    const hex = spend();
    const inspected = inspectTransaction(hex);
    expect(inspected.ok).toBe(true);
    if (!inspected.ok) return;
    const parsed = btc.Transaction.fromRaw(Buffer.from(hex, 'hex'));
    expect(inspected.tx.txid).toBe(parsed.id);
    expect(inspected.tx.weight).toBe(parsed.weight);
    expect(inspected.tx.vsize).toBe(parsed.vsize);
    expect(inspected.tx.size).toBe(hex.length / 2);
    expect(inspected.tx.wtxid).not.toBe(inspected.tx.txid);
  });

  it('accepts a legacy transaction, whose wtxid is its txid', () => {
    const inspected = inspectTransaction(buildRawTx());
    expect(inspected.ok && inspected.tx.wtxid === inspected.tx.txid).toBe(true);
  });

  it('accepts OP_RETURN and P2A anchor outputs', () => {
    const hex = spend([
      { script: faucet.script, value: 10_000n },
      { script: btc.Script.encode(['RETURN', new Uint8Array(20).fill(1)]), value: 0n },
      { script: Uint8Array.of(0x51, 0x02, 0x4e, 0x73), value: 240n },
    ]);
    expect(inspectTransaction(hex).ok).toBe(true);
  });

  it.each([
    ['hex_odd_length', `${buildRawTx()}0`],
    ['hex_length_out_of_range', '02000000'.repeat(10)],
    ['hex_length_out_of_range', 'ab'.repeat(MAX_HEX_CHARS / 2 + 1)],
    ['transaction_unparsable', 'ab'.repeat(100)],
    ['transaction_unparsable', `${buildRawTx()}00`],
    ['transaction_without_outputs', raw({ outputs: [], scriptSigBytes: 20 })],
    ['coinbase_input', raw({ inputs: [{ txid: '00'.repeat(32), index: 0xffffffff }] })],
    ['version_unsupported', raw({ version: 4 })],
    [
      'duplicate_inputs',
      raw({
        inputs: [
          { txid: '22'.repeat(32), index: 1 },
          { txid: '22'.repeat(32), index: 1 },
        ],
      }),
    ],
    ['output_value_too_large', raw({ outputs: [{ amount: 2_100_000_000_000_001n, script: faucet.script }] })],
    ['transaction_too_small', raw({ outputs: [{ amount: 1n, script: Uint8Array.of(0x6a) }] })],
    [
      'weight_too_high',
      raw({
        inputs: Array.from({ length: 2_500 }, (_, i) => ({
          txid: i.toString(16).padStart(64, '0'),
          index: 0,
        })),
      }),
    ],
  ] as const)('refuses with %s', (code, hex) => {
    const inspected = inspectTransaction(hex);
    expect(inspected.ok ? 'accepted' : inspected.code).toBe(code);
  });

  it('checks a 1,000-input transaction', () => {
    const hex = spend(
      [{ script: faucet.script, value: 10_000n }],
      Array.from({ length: 64 }, (_, i) => i),
    );
    expect(inspectTransaction(hex).ok).toBe(true);
    const big = raw({
      inputs: Array.from({ length: 1_000 }, (_, i) => ({
        txid: i.toString(16).padStart(64, '0'),
        index: i % 3,
      })),
    });
    const inspected = inspectTransaction(big);
    expect(inspected.ok).toBe(true);
    if (inspected.ok) expect(inspected.tx.inputs).toHaveLength(1_000);
  });
});
