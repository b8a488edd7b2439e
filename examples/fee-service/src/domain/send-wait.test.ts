import { describe, expect, it } from 'vitest';
import {
  HEAVY_BACKLOG_BLOCKS,
  LIMITATIONS,
  MEANINGFUL_MIN_PERCENT,
  MEANINGFUL_MIN_SAT_VB,
} from './constants';
import { decideSendWait } from './send-wait';

const tiers = (t: string) => {
  const [fastest, half_hour, hour, economy, minimum] = t.split('/').map(Number) as [
    number,
    number,
    number,
    number,
    number,
  ];
  return { fastest, half_hour, hour, economy, minimum };
};

describe('send-wait-v1 worked examples (docs/fee-rules.md#send-wait-v1)', () => {
  it.each([
    ['13/11/9/2/1', 3_000_000, 11, 84.6, 1540, 'wait', ['meaningful_fee_curve_savings']],
    ['2/1/1/1/1', 400_000, 1, 50, 140, 'send', ['limited_wait_savings']],
    ['62/55/48/30/15', 95_000_000, 32, 51.6, 4480, 'wait', ['meaningful_fee_curve_savings', 'heavy_backlog']],
    ['26/26/25/22/11', 40_000_000, 4, 15.4, 560, 'send', ['limited_wait_savings', 'heavy_backlog']],
    ['2.023/1.094/0.502/0.2/0.1', 900_000, 1.823, 90.1, 256, 'send', ['limited_wait_savings']],
  ])(
    'answers %s with vsize %i: %d sat/vB, %d %%, %d sats, %s',
    (t, vsize, satVb, percent, at140, decision, reasons) => {
      const result = decideSendWait({ tiers: tiers(t), mempool: { count: 1000, vsize } });
      expect(result.potential_savings.sat_vb).toBe(satVb);
      expect(result.potential_savings.percent).toBe(percent);
      expect(result.potential_savings.at_140_vbytes_sat).toBe(at140);
      expect(result.decision).toBe(decision);
      expect(result.reason_codes).toEqual(reasons);
    },
  );

  it('prints 2.023 − 0.2 as the JSON number 1.823', () => {
    const result = decideSendWait({
      tiers: tiers('2.023/1.094/0.502/0.2/0.1'),
      mempool: { count: 1, vsize: 1 },
    });
    expect(JSON.stringify(result.potential_savings)).toBe(
      '{"sat_vb":1.823,"percent":90.1,"at_140_vbytes_sat":256}',
    );
  });

  it('answers send when the gap is exactly below the sat/vB threshold and wait at it', () => {
    const below = decideSendWait({ tiers: tiers('2.999/2/2/1/1'), mempool: { count: 1, vsize: 1 } });
    const at = decideSendWait({ tiers: tiers('3/2/2/1/1'), mempool: { count: 1, vsize: 1 } });
    expect(below.decision).toBe('send');
    expect(at.decision).toBe('wait');
  });

  it('answers send when the percent is just below 25 and wait at exactly 25', () => {
    expect(decideSendWait({ tiers: tiers('100/90/80/76/1'), mempool: { count: 1, vsize: 1 } }).decision).toBe(
      'send',
    );
    expect(decideSendWait({ tiers: tiers('100/90/80/75/1'), mempool: { count: 1, vsize: 1 } }).decision).toBe(
      'wait',
    );
  });

  it('reports heavy_backlog from exactly 8 projected blocks', () => {
    const seven = decideSendWait({ tiers: tiers('5/5/5/5/1'), mempool: { count: 1, vsize: 7_000_000 } });
    const eight = decideSendWait({ tiers: tiers('5/5/5/5/1'), mempool: { count: 1, vsize: 7_000_001 } });
    expect(seven.reason_codes).toEqual(['limited_wait_savings']);
    expect(eight.reason_codes).toEqual(['limited_wait_savings', 'heavy_backlog']);
  });

  it('names its constants in the limitations', () => {
    const text = LIMITATIONS.join('\n');
    expect(text).toContain(`${MEANINGFUL_MIN_SAT_VB} sat/vB`);
    expect(text).toContain(`${MEANINGFUL_MIN_PERCENT}%`);
    expect(text).toContain(`${HEAVY_BACKLOG_BLOCKS} or more projected blocks`);
    expect(text).toMatch(/illustrations, not guarantees/);
    expect(text).toMatch(/Fees can rise while waiting/);
  });
});
