import { describe, expect, it } from 'vitest';
import { buildSignedTransaction } from '../../../test/fixtures/signed-tx';
import type { FeeMarket } from '../market';
import { analyzeTransaction } from './analyze';
import { parseTransaction, TransactionDecodeError } from './parse';
import { transactionProse } from './prose';

const market: FeeMarket = {
  tiers: { fastest: 20, half_hour: 15, hour: 10, economy: 5, minimum: 1 },
  next_block_floor_sat_vb: 12.5,
  floor_source: 'projected_block',
  mempool_vsize: 3_000_000,
  mempool_count: 9_000,
  projected_block_count: 3,
  tip_height: 910_010,
};
const unconfirmed = { confirmed: false };

function explain(built: ReturnType<typeof buildSignedTransaction>, status: object = unconfirmed) {
  const parsed = parseTransaction({ hex: built.hex, prevouts: built.prevouts });
  return analyzeTransaction({ parsed, status: status as never, market });
}

// Sizes worked out by hand from the serialization (BIP 141: weight = 3 × base + total):
// input 32+4+1+scriptSig+4 bytes; outputs 8+1+script bytes; version 4, counts 1 each, locktime 4;
// witness: marker+flag 2, then per input 1 (item count) + each item's 1-byte length + bytes.
// Low-R ECDSA signatures with the sighash byte are 71 bytes, compressed keys 33, Schnorr 64.
describe('parseTransaction and analyzeTransaction, per script type (hand-checked sizes and fees)', () => {
  it('P2WPKH input into P2WPKH and P2TR outputs: 153 vB, 3,060 sats, 20 sat/vB', () => {
    // base 4+1+41+1+(8+1+22)+(8+1+34)+4 = 125; witness 2+1+(1+71)+(1+33) = 109; weight 609.
    const built = buildSignedTransaction({
      inputs: [{ kind: 'p2wpkh', key: 1, amount: 100_000 }],
      outputs: [
        { kind: 'p2wpkh', key: 2, amount: 60_000 },
        { kind: 'p2tr', key: 3, amount: 36_940 },
      ],
    });
    const facts = explain(built);
    expect(facts.transaction).toMatchObject({
      txid: built.txid,
      size: 234,
      weight: 609,
      vsize: 153,
      segwit: true,
    });
    expect(facts.inputs.map((i) => i.type)).toEqual(['p2wpkh']);
    expect(facts.outputs.map((o) => o.type)).toEqual(['p2wpkh', 'p2tr']);
    expect(facts.fee).toEqual({ fee_sat: 3_060, fee_rate_sat_vb: 20 });
    // floor 12.5 → ceil(12.5 × 153) = 1,913 sats needed; 3,060 − 1,913 = 1,147 overpaid.
    expect(facts.market).toMatchObject({
      tier_met: 'fastest',
      would_be_included_next_block: true,
      overpaid_sat_vb: 7.5,
      overpaid_sat: 1_147,
    });
  });

  it('P2PKH input into P2PKH and OP_RETURN outputs: 207 vB, no witness', () => {
    // scriptSig (1+71)+(1+33) = 106 → input 32+4+1+106+4 = 147; outputs (8+1+25) + (8+1+7);
    // base = total = 4+1+147+1+34+16+4 = 207; weight 828.
    const built = buildSignedTransaction({
      inputs: [{ kind: 'p2pkh', key: 4, amount: 50_000 }],
      outputs: [
        { kind: 'p2pkh', key: 5, amount: 48_965 },
        { kind: 'op_return', data: 'hello' },
      ],
    });
    const facts = explain(built);
    expect(facts.transaction).toMatchObject({ size: 207, weight: 828, vsize: 207, segwit: false });
    expect(facts.inputs[0]!.type).toBe('p2pkh');
    expect(facts.outputs.map((o) => o.type)).toEqual(['p2pkh', 'op_return']);
    expect(facts.outputs[1]!.address).toBeNull();
    // 1,035 / 207 = 5 sat/vB: the economy tier, below the 12.5 floor.
    expect(facts.fee).toEqual({ fee_sat: 1_035, fee_rate_sat_vb: 5 });
    expect(facts.market).toMatchObject({
      tier_met: 'economy',
      would_be_included_next_block: false,
      overpaid_sat: 0,
    });
  });

  it('P2SH-wrapped P2WPKH input into a P2SH output: 134 vB', () => {
    // scriptSig push of the 22-byte program = 23 → input 64; output 8+1+23 = 32;
    // base 4+1+64+1+32+4 = 106; witness 109; weight 424+109 = 533 → 134 vB.
    const built = buildSignedTransaction({
      inputs: [{ kind: 'p2sh-p2wpkh', key: 6, amount: 20_000 }],
      outputs: [{ kind: 'p2sh', key: 7, amount: 19_732 }],
    });
    const facts = explain(built);
    expect(facts.transaction).toMatchObject({ weight: 533, vsize: 134 });
    expect(facts.inputs[0]!.type).toBe('p2sh-p2wpkh');
    expect(facts.outputs[0]!.type).toBe('p2sh');
    expect(facts.fee).toEqual({ fee_sat: 268, fee_rate_sat_vb: 2 });
    expect(facts.market!.tier_met).toBe('minimum');
  });

  it('P2WSH input into a P2WSH output: 122 vB', () => {
    // witness 2+1+(1+71)+(1+35) = 111 (the witness script is a 35-byte P2PK);
    // base 4+1+41+1+(8+1+34)+4 = 94; weight 376+111 = 487 → 122 vB.
    const built = buildSignedTransaction({
      inputs: [{ kind: 'p2wsh', key: 8, amount: 30_000 }],
      outputs: [{ kind: 'p2wsh', key: 9, amount: 28_780 }],
    });
    const facts = explain(built);
    expect(facts.transaction).toMatchObject({ weight: 487, vsize: 122 });
    expect(facts.inputs[0]!.type).toBe('p2wsh');
    expect(facts.outputs[0]!.type).toBe('p2wsh');
    expect(facts.fee).toEqual({ fee_sat: 1_220, fee_rate_sat_vb: 10 });
    expect(facts.market!.tier_met).toBe('hour');
  });

  it('two P2TR key-path inputs into P2TR and a P2A anchor: 182 vB', () => {
    // witness 2+2×(1+1+64) = 134; outputs (8+1+34)+(8+1+4) = 56;
    // base 4+1+2×41+1+56+4 = 148; weight 592+134 = 726 → 182 vB (181.5 rounded up).
    const built = buildSignedTransaction({
      inputs: [
        { kind: 'p2tr', key: 10, amount: 40_000 },
        { kind: 'p2tr', key: 11, amount: 40_000 },
      ],
      outputs: [
        { kind: 'p2tr', key: 12, amount: 75_000 },
        { kind: 'anchor', amount: 240 },
      ],
    });
    const facts = explain(built);
    expect(facts.transaction).toMatchObject({ weight: 726, vsize: 182 });
    expect(facts.script_types).toEqual({ inputs: { p2tr: 2 }, outputs: { p2tr: 1, anchor: 1 } });
    // 80,000 − 75,240 = 4,760 sats / 182 vB = 26.153846… → 26.154 sat/vB.
    expect(facts.fee).toEqual({ fee_sat: 4_760, fee_rate_sat_vb: 26.154 });
    expect(facts.heuristics).toEqual([expect.objectContaining({ label: 'consolidation', confidence: 0.5 })]);
  });

  it('reports the fee as unknown when a prevout is missing, and refuses bytes that are not a transaction', () => {
    const built = buildSignedTransaction({
      inputs: [{ kind: 'p2wpkh', key: 1, amount: 100_000 }],
      outputs: [{ kind: 'p2wpkh', key: 2, amount: 90_000 }],
    });
    const parsed = parseTransaction({ hex: built.hex, prevouts: new Map() });
    expect(parsed.fee_sat).toBeNull();
    expect(parsed.inputs[0]!.kind).toBe('unknown');
    const facts = analyzeTransaction({ parsed, status: unconfirmed, market });
    expect(facts.fee).toBeNull();
    expect(facts.market).toBeNull();
    expect(transactionProse(facts)).toContain('fee is unknown');
    expect(() => parseTransaction({ hex: 'zz', prevouts: new Map() })).toThrow(TransactionDecodeError);
    expect(() => parseTransaction({ hex: `${built.hex}00`, prevouts: new Map() })).toThrow(
      TransactionDecodeError,
    );
  });
});

describe('status, RBF and the confirmed comparison', () => {
  const built = buildSignedTransaction({
    inputs: [{ kind: 'p2wpkh', key: 1, amount: 100_000, sequence: 0xfffffffd }],
    outputs: [{ kind: 'p2wpkh', key: 2, amount: 97_705 }],
  });
  it('signals BIP 125 from an input sequence below 0xfffffffe', () => {
    // 1 in 1 out P2WPKH: base 4+1+41+1+31+4 = 82, witness 109 → weight 437 → 110 vB.
    const facts = explain(built);
    expect(facts.transaction.vsize).toBe(110);
    expect(facts.rbf).toEqual({ signals_bip125: true, signalling_inputs: [0], truc_v3: false });
    expect(transactionProse(facts)).toContain('signals replace-by-fee');
  });

  it('counts confirmations from the tip and compares the rate with its own block’s entry rate', () => {
    const parsed = parseTransaction({ hex: built.hex, prevouts: built.prevouts });
    const confirmedIn = (blockWeight?: number) =>
      analyzeTransaction({
        parsed,
        status: {
          confirmed: true,
          block_height: 910_001,
          block_hash: 'ab'.repeat(32),
          block_time: 1_786_000_000,
        },
        market,
        blockFeeRange: [1, 4, 6, 9, 14, 20, 200],
        ...(blockWeight === undefined ? {} : { blockWeight }),
      });
    // A full block (3,996,000 WU): p10 4 stands for its lowest included rate.
    // 2,295 sats / 110 vB = 20.864 sat/vB; ceil(4 × 110) = 440; overpaid 1,855 sats.
    const full = confirmedIn(3_996_000);
    expect(full.fee).toEqual({ fee_sat: 2_295, fee_rate_sat_vb: 20.864 });
    expect(full.status).toMatchObject({
      confirmed: true,
      confirmations: 10,
      block_time: '2026-08-06T07:06:40.000Z',
    });
    expect(full.market).toMatchObject({
      reference: 'confirming_block',
      would_be_included_next_block: null,
      block_p10_sat_vb: 4,
      block_full: true,
      block_entry_rate_sat_vb: 4,
      overpaid_sat_vb: 16.864,
      overpaid_sat: 1_855,
    });
    expect(transactionProse(full)).toContain(
      'its 10th-percentile rate, 4 sat/vB, stands for its lowest included rate',
    );
    // A block with room (83 % full): the relay minimum (the minimum tier, 1) would have been included.
    const room = confirmedIn(3_320_000);
    expect(room.market).toMatchObject({
      block_full: false,
      block_entry_rate_sat_vb: 1,
      overpaid_sat_vb: 19.864,
      overpaid_sat: 2_295 - 110,
    });
    const prose = transactionProse(room);
    expect(prose).toContain(
      'its block had room, so any rate meeting the relay minimum of 1 sat/vB would have been included',
    );
    expect(prose).not.toMatch(/needed|needs/);
    // Its weight unknown: read as full, the rule's cautious side.
    expect(confirmedIn().market).toMatchObject({ block_full: null, block_entry_rate_sat_vb: 4 });
  });

  it('sums a CPFP package from its mempool relatives', () => {
    const parsed = parseTransaction({ hex: built.hex, prevouts: built.prevouts });
    const facts = analyzeTransaction({
      parsed,
      status: unconfirmed,
      market,
      cpfp: { ancestors: [{ txid: 'cd'.repeat(32), fee: 110, weight: 561 }], descendants: [] },
    });
    // (2,295 + 110) / (110 + 141) = 9.582 sat/vB.
    expect(facts.cpfp).toMatchObject({
      package_fee_sat: 2_405,
      package_vsize: 251,
      package_fee_rate_sat_vb: 9.582,
    });
  });

  it('says when the upstream’s fee or weight disagrees with the bytes', () => {
    const parsed = parseTransaction({ hex: built.hex, prevouts: built.prevouts });
    const agree = analyzeTransaction({
      parsed,
      status: unconfirmed,
      market,
      upstream: { fee: 2_295, weight: 437 },
    });
    expect(agree.consistency.agrees).toBe(true);
    const disagree = analyzeTransaction({
      parsed,
      status: unconfirmed,
      market,
      upstream: { fee: 2_000, weight: 437 },
    });
    expect(disagree.consistency.agrees).toBe(false);
  });
});

describe('heuristics', () => {
  it.each([
    {
      name: 'consolidation: 3 inputs into 1 output',
      inputs: [1, 2, 3].map((k) => ({ kind: 'p2wpkh' as const, key: k, amount: 10_000 })),
      outputs: [{ kind: 'p2wpkh' as const, key: 9, amount: 29_000 }],
      expected: [{ label: 'consolidation', confidence: 0.9 }],
    },
    {
      name: 'batch payout: 1 input into 6 payments',
      inputs: [{ kind: 'p2wpkh' as const, key: 1, amount: 1_000_000 }],
      outputs: [11, 12, 13, 14, 15, 16].map((k, i) => ({
        kind: 'p2wpkh' as const,
        key: k,
        amount: 100_000 + i * 1_111,
      })),
      expected: [{ label: 'batch_payout', confidence: 0.6 }],
    },
    {
      name: 'coinjoin-like: 5 inputs into 5 equal outputs (no change guess)',
      inputs: [1, 2, 3, 4, 5].map((k) => ({ kind: 'p2wpkh' as const, key: k, amount: 101_000 })),
      outputs: [11, 12, 13, 14, 15].map((k) => ({ kind: 'p2wpkh' as const, key: k, amount: 100_000 })),
      expected: [{ label: 'coinjoin_like', confidence: 0.85 }],
    },
    {
      name: 'likely change: the non-round output of the inputs’ type',
      inputs: [{ kind: 'p2wpkh' as const, key: 1, amount: 200_000 }],
      outputs: [
        { kind: 'p2tr' as const, key: 2, amount: 50_000 },
        { kind: 'p2wpkh' as const, key: 3, amount: 148_321 },
      ],
      expected: [{ label: 'likely_change', confidence: 0.75, output: 1 }],
    },
    {
      name: 'likely change: an output paying back to an input’s script',
      inputs: [{ kind: 'p2wpkh' as const, key: 1, amount: 200_000 }],
      outputs: [
        { kind: 'p2wpkh' as const, key: 1, amount: 120_000 },
        { kind: 'p2wpkh' as const, key: 3, amount: 70_000 },
      ],
      // reuse → output 0 (0.95); round amounts on both outputs → no round vote; same type twice → none.
      expected: [{ label: 'likely_change', confidence: 0.95, output: 0 }],
    },
  ])('$name', ({ inputs, outputs, expected }) => {
    const facts = explain(buildSignedTransaction({ inputs, outputs }));
    expect(
      facts.heuristics.map(({ label, confidence, output }) => ({
        label,
        confidence,
        ...(output === undefined ? {} : { output }),
      })),
    ).toEqual(expected);
    for (const h of facts.heuristics) expect(h.rule.length).toBeGreaterThan(10);
    expect(transactionProse(facts)).toContain('Heuristic, not fact');
  });
});
