import * as btc from '@scure/btc-signer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildRawTx } from '../../../../test/fixtures/raw-tx';
import { createFaucet, signFaucetSpend } from '../../../simulator/wallet';
import { inspectTransaction, MAX_HEX_CHARS, MIN_HEX_CHARS } from './inspect';

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

describe('the checks read transactions as @scure/btc-signer does', () => {
  const txArb = fc.record({
    version: fc.integer({ min: 1, max: 3 }),
    segwit: fc.boolean(),
    inputs: fc.array(
      fc.record({
        txid: fc.uint8Array({ minLength: 32, maxLength: 32 }),
        index: fc.integer({ min: 0, max: 0xfffffffe }),
        scriptSig: fc.uint8Array({ maxLength: 40 }),
        sequence: fc.integer({ min: 0, max: 0xffffffff }),
        witness: fc.array(fc.uint8Array({ maxLength: 80 }), { minLength: 1, maxLength: 3 }),
      }),
      { minLength: 1, maxLength: 6 },
    ),
    outputs: fc.array(
      fc.record({
        amount: fc.bigInt({ min: 0n, max: 2_100_000_000_000_000n }),
        script: fc.uint8Array({ maxLength: 60 }),
      }),
      { minLength: 1, maxLength: 5 },
    ),
    lockTime: fc.integer({ min: 0, max: 0xffffffff }),
  });
  const encode = (tx: typeof txArb extends fc.Arbitrary<infer T> ? T : never) =>
    btc.RawTx.encode({
      version: tx.version,
      segwitFlag: tx.segwit,
      inputs: tx.inputs.map((i) => ({
        txid: i.txid,
        index: i.index,
        finalScriptSig: i.scriptSig,
        sequence: i.sequence,
      })),
      outputs: tx.outputs,
      witnesses: tx.segwit ? tx.inputs.map((i) => i.witness) : undefined,
      lockTime: tx.lockTime,
    });
  const library = (bytes: Uint8Array) => {
    try {
      btc.RawTx.decode(bytes);
      return btc.Transaction.fromRaw(bytes, {
        allowUnknownOutputs: true,
        allowUnknownInputs: true,
        disableScriptCheck: true,
      }).id;
    } catch {
      return undefined;
    }
  };

  it('gives the same txid for every transaction the library writes', () => {
    fc.assert(
      fc.property(txArb, (tx) => {
        const bytes = encode(tx);
        const hex = Buffer.from(bytes).toString('hex');
        if (hex.length < MIN_HEX_CHARS) return;
        const inspected = inspectTransaction(hex);
        const id = library(bytes);
        if (inspected.ok) expect(inspected.tx.txid).toBe(id);
        else
          expect(['transaction_too_small', 'duplicate_inputs', 'coinbase_input']).toContain(inspected.code);
      }),
      { numRuns: 300 },
    );
  });

  it('never reads mutated bytes the library refuses, nor a different txid from bytes it reads', () => {
    fc.assert(
      fc.property(
        txArb,
        fc.nat(),
        fc.integer({ min: 0, max: 255 }),
        fc.constantFrom('flip', 'cut', 'append'),
        (tx, at, byte, how) => {
          const original = encode(tx);
          const mutated = Buffer.from(original);
          const position = at % mutated.length;
          if (how === 'flip') mutated.writeUInt8(byte, position);
          const bytes =
            how === 'cut'
              ? mutated.subarray(0, position)
              : how === 'append'
                ? Buffer.concat([mutated, Buffer.of(byte)])
                : mutated;
          const hex = bytes.toString('hex');
          if (hex.length < MIN_HEX_CHARS) return;
          const inspected = inspectTransaction(hex);
          const id = library(bytes);
          if (inspected.ok) expect(id).toBe(inspected.tx.txid);
          else if (inspected.code === 'transaction_unparsable') expect(id).toBeUndefined();
        },
      ),
      { numRuns: 1000 },
    );
  });
});
