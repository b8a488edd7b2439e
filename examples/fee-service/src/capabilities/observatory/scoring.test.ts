import { describe, expect, it } from 'vitest';
import { createPrng } from '../../simulator/prng';
import type { BlockPercentiles } from '../history/types';
import { binOf, EXACT_LIMIT, HistogramSum, valueOfBin } from './histogram';
import { HOUR_MS, ScoreBook, unionOfWindows } from './score-book';
import { judgeEstimate } from './scoring';

/** A full block (3,996,000 WU, relay minimum 1 sat/vB) with p10 and p75 given in sat/vB. */
const block = (height: number, p10: number, p75: number): BlockPercentiles => ({
  height,
  weight: 3_996_000,
  p10: p10 * 1000,
  p75: p75 * 1000,
  relayMinimum: 1000,
});
/** A block with room: `weight` below 3,960,000 WU. */
const roomy = (
  height: number,
  p10: number,
  p75: number,
  weight = 1_600_000,
  relay = 1,
): BlockPercentiles => ({
  height,
  weight,
  p10: p10 * 1000,
  p75: p75 * 1000,
  relayMinimum: relay * 1000,
});
const estimate = (rateSatVb: number, target: number, tipHeight = 100) => ({
  rate: rateSatVb * 1000,
  target,
  tipHeight,
});

describe('judgeEstimate (docs/fee-rules.md#would-have-been-included)', () => {
  it('counts a quote at the relay minimum as included in a block that had room, whatever its p10', () => {
    // a 40 %-full block whose cheapest tenth paid 3: anything meeting the relay minimum of 1 got in
    expect(judgeEstimate(estimate(1, 1), [roomy(101, 3, 6)])).toEqual({
      hit: true,
      firstFit: 101,
      overpay: false,
      overpaymentMsat: 0,
      overpaymentSats: 0,
      entryMsat: 1000,
    });
    // 2.5 in the same block: 1.5 sat/vB more than needed, ceil(350) − ceil(140) = 210 sats
    expect(judgeEstimate(estimate(2.5, 1), [roomy(101, 3, 6)])).toMatchObject({
      hit: true,
      overpaymentMsat: 1500,
      overpaymentSats: 210,
    });
    // below the relay minimum nothing gets in, room or not
    expect(judgeEstimate(estimate(0.5, 1), [roomy(101, 3, 6)])).toMatchObject({ hit: false });
  });

  it('takes the relay minimum the block was recorded with (0.1 sat/vB on Core ≥ 29.1)', () => {
    expect(judgeEstimate(estimate(0.1, 1), [roomy(101, 0.4, 1, 900_000, 0.1)])).toMatchObject({
      hit: true,
      overpaymentMsat: 0,
    });
    expect(judgeEstimate(estimate(0.1, 1), [roomy(101, 0.4, 1, 900_000, 1)])).toMatchObject({ hit: false });
  });

  it('calls a block full from 3,960,000 WU: just below, it had room', () => {
    expect(judgeEstimate(estimate(1, 1), [roomy(101, 3, 6, 3_959_999)])).toMatchObject({ hit: true });
    expect(judgeEstimate(estimate(1, 1), [roomy(101, 3, 6, 3_960_000)])).toMatchObject({ hit: false });
  });

  it('never puts a full block’s entry rate below the relay minimum (a p10 of prioritised zero-fee transactions)', () => {
    const full = { ...block(101, 0.5, 6), relayMinimum: 1000 };
    expect(judgeEstimate(estimate(0.8, 1), [full])).toMatchObject({ hit: false });
    expect(judgeEstimate(estimate(1.2, 1), [full])).toMatchObject({ hit: true, overpaymentMsat: 200 });
  });

  it('takes the first block that would have included q, room or full, as the first fit', () => {
    // 101 full with p10 8 (q = 2 misses it); 102 had room → included at the relay minimum there
    expect(judgeEstimate(estimate(2, 2), [block(101, 8, 12), roomy(102, 5, 9)])).toEqual({
      hit: true,
      firstFit: 102,
      overpay: false,
      overpaymentMsat: 1000,
      overpaymentSats: 140,
      entryMsat: 1000,
    });
  });

  it('counts a hit when q reaches p10 of a full block of the window, and measures the overpayment from that block', () => {
    // q = 5, block 101: p10 = 4, p75 = 6 → hit, within; 5 − 4 = 1 sat/vB; ceil(700) − ceil(560) = 140 sats
    expect(judgeEstimate(estimate(5, 1), [block(101, 4, 6)])).toEqual({
      hit: true,
      firstFit: 101,
      overpay: false,
      overpaymentMsat: 1000,
      overpaymentSats: 140,
      entryMsat: 4000,
    });
  });

  it('counts a miss when q is below p10 of every full block of the window, and keeps the lowest entry rate it needed', () => {
    // q = 3 against p10 4 and 3.5 over a 2-block window: 3.5 would have made it
    expect(judgeEstimate(estimate(3, 2), [block(101, 4, 9), block(102, 3.5, 5)])).toEqual({
      hit: false,
      firstFit: undefined,
      overpay: false,
      overpaymentMsat: 0,
      overpaymentSats: 0,
      entryMsat: 3500,
    });
  });

  it('judges an overpay against the first fit, not the cheapest block of the window', () => {
    // q = 20: block 101 (p10 25) does not fit; 102 (p10 8, p75 15) is the first fit, 20 > 15;
    // block 103 (p10 2) would give a larger overpayment but comes later.
    const judgment = judgeEstimate(estimate(20, 3), [
      block(101, 25, 40),
      block(102, 8, 15),
      block(103, 2, 3),
    ]);
    expect(judgment).toEqual({
      hit: true,
      firstFit: 102,
      overpay: true,
      overpaymentMsat: 12_000,
      overpaymentSats: 2800 - 1120,
      entryMsat: 8000,
    });
  });

  it('treats q = p10 as a hit and q = p75 as no overpay', () => {
    expect(judgeEstimate(estimate(4, 1), [block(101, 4, 4)])).toMatchObject({ hit: true, overpay: false });
  });

  it('rounds the 140 vB fees up to whole sats before subtracting', () => {
    // ceil(140 × 2.023) = ceil(283.22) = 284; ceil(140 × 2.001) = ceil(280.14) = 281
    expect(
      judgeEstimate({ rate: 2023, target: 1, tipHeight: 0 }, [
        { height: 1, weight: 3_996_000, p10: 2001, p75: 3000, relayMinimum: 1000 },
      ]),
    ).toMatchObject({ overpaymentMsat: 22, overpaymentSats: 3 });
  });

  it('refuses to judge before the whole window exists', () => {
    expect(() => judgeEstimate(estimate(1, 3), [block(101, 5, 6), block(102, 5, 6)])).toThrow(/103/);
  });
});

describe('ScoreBook', () => {
  const at = (hour: number) => hour * HOUR_MS + 60_000;

  it('ranks an estimator quoting 1,000 sat/vB last although it never misses', () => {
    const book = new ScoreBook();
    // 10 blocks, p10 = 3, p75 = 6 each; three sources quote for target 1 at tip 100 + i.
    for (let i = 0; i < 10; i += 1) {
      const b = block(101 + i, 3, 6);
      const judge = (source: string, rate: number) => {
        const e = { source, target: 1, observedAt: at(0), tipHeight: 100 + i };
        book.addPoll(source, 1, e.observedAt, true);
        book.applyJudgment(e, judgeEstimate({ rate: rate * 1000, target: 1, tipHeight: 100 + i }, [b]), 1);
      };
      judge('always-1000', 1000); // hits; 140,000 − 420 sats overpaid
      judge('honest', i === 0 ? 2 : 4); // one miss in 10; 560 − 420 = 140 sats otherwise
      judge('low', i < 5 ? 2 : 3); // half misses; exact p10 otherwise
    }
    const rows = book.scoreboard(0, 0);
    // a miss needed p10 = 3 sat/vB: 420 sats at 140 vB, and costs ten times that
    expect(rows.map((r) => [r.source, r.rank, r.cost, r.median_miss_entry_fee_sats_140])).toEqual([
      ['honest', 1, 140 + 10 * 0.1 * 420, 420],
      ['low', 2, 0 + 10 * 0.5 * 420, 420],
      // 140,000 − 420 = 139,580 sats every time, as its histogram bin reports it; never a miss
      ['always-1000', 3, valueOfBin(binOf(139_580)) + 0, undefined],
    ]);
    const always = rows.find((r) => r.source === 'always-1000')!;
    expect(always).toMatchObject({ n: 10, hit_rate: 1, overpay_rate: 1, within_rate: 0, blocks: 10 });
    // above the exact range the median is its histogram bin's midpoint (within 1.6 %)
    expect(always.median_overpayment_sats_140).toBe(valueOfBin(binOf(139_580)));
    expect(Math.abs(always.median_overpayment_sats_140! - 139_580) / 139_580).toBeLessThan(0.016);
  });

  it('ranks a source quoting what gets in above one that overpays tenfold in a calm market and never misses', () => {
    const book = new ScoreBook();
    // 10 next-block windows; 7 blocks had room (relay minimum 1), 3 came full with p10 = 3
    for (let i = 0; i < 10; i += 1) {
      const b = i < 3 ? block(101 + i, 3, 6) : roomy(101 + i, 2, 4);
      for (const [source, rate] of [
        ['relay-minimum', 1],
        ['conservative', 12],
      ] as const) {
        book.applyJudgment(
          { source, target: 1, observedAt: at(0), tipHeight: 100 + i },
          judgeEstimate({ rate: rate * 1000, target: 1, tipHeight: 100 + i }, [b]),
          1,
        );
      }
    }
    const rows = book.scoreboard(0, 0);
    expect(rows.map((r) => [r.source, r.rank, r.hit_rate, r.median_overpayment_sats_140, r.cost])).toEqual([
      // 3 misses needing 420 sats: 10 × 0.3 × 420
      ['relay-minimum', 1, 0.7, 0, 1260],
      // hits every time; 12 − 1 = 11 sat/vB over in the 7 roomy blocks (1,540 sats, as its bin
      // reports it), 9 in the full ones
      ['conservative', 2, 1, valueOfBin(binOf(1540)), valueOfBin(binOf(1540))],
    ]);
  });

  it('never mixes horizons: each target is ranked on its own', () => {
    const book = new ScoreBook();
    const blocks = [block(101, 5, 8), block(102, 2, 3), block(103, 2, 3)];
    const judge = (source: string, target: number, rate: number) =>
      book.applyJudgment(
        { source, target, observedAt: at(0), tipHeight: 100 },
        judgeEstimate({ rate: rate * 1000, target, tipHeight: 100 }, blocks.slice(0, target)),
        1,
      );
    judge('a', 1, 6); // target 1: hit, 1 sat/vB over
    judge('b', 1, 4); // target 1: miss
    judge('a', 3, 6); // target 3: hit on 101 (first fit), 1 sat/vB over
    judge('b', 3, 2); // target 3: hit on 102, exact
    const rows = book.scoreboard(0, 0);
    expect(rows.map((r) => [r.target, r.source, r.rank, r.hit_rate])).toEqual([
      [1, 'a', 1, 1],
      [1, 'b', 2, 0],
      [3, 'b', 1, 1],
      [3, 'a', 2, 1],
    ]);
  });

  it('leaves a row with nothing judged unranked, after the ranked rows of its horizon', () => {
    const book = new ScoreBook();
    book.addPoll('aardvark', 1, at(0), true); // polled, nothing judged yet
    for (const [source, rate] of [
      ['b', 4],
      ['c', 2],
    ] as const) {
      book.addPoll(source, 1, at(0), true);
      book.applyJudgment(
        { source, target: 1, observedAt: at(0), tipHeight: 100 },
        judgeEstimate({ rate: rate * 1000, target: 1, tipHeight: 100 }, [block(101, 3, 6)]),
        1,
      );
    }
    expect(book.scoreboard(0, 0).map((r) => [r.source, r.rank, r.cost])).toEqual([
      ['b', 1, 140],
      ['c', 2, 10 * 1 * 420], // a miss needing p10 = 3 sat/vB, 420 sats
      ['aardvark', undefined, undefined],
    ]);
  });

  it('takes a judgment back on a reorg and counts the new one', () => {
    const book = new ScoreBook();
    const e = { source: 's', target: 1, observedAt: at(3), tipHeight: 100 };
    const orphaned = judgeEstimate({ rate: 4000, target: 1, tipHeight: 100 }, [block(101, 3, 5)]);
    book.applyJudgment(e, orphaned, 1);
    expect(book.scoreboard(3, 3)[0]).toMatchObject({ n: 1, hit_rate: 1 });
    // block 101 is replaced by one whose p10 is 4.5: the same estimate now misses, needing 630 sats
    book.applyJudgment(e, orphaned, -1);
    book.applyJudgment(e, judgeEstimate({ rate: 4000, target: 1, tipHeight: 100 }, [block(101, 4.5, 6)]), 1);
    expect(book.scoreboard(3, 3)[0]).toMatchObject({
      n: 1,
      hit_rate: 0,
      miss_rate: 1,
      median_overpayment_sats_140: undefined,
      cost: 10 * valueOfBin(binOf(630)),
      blocks: 1,
    });
  });

  it('reports availability as the share of polls that returned a value, and leaves out hours outside the window', () => {
    const book = new ScoreBook();
    for (let i = 0; i < 4; i += 1) book.addPoll('esplora', 6, at(10), i !== 2);
    book.addPoll('esplora', 6, at(11), false);
    expect(book.scoreboard(10, 10)[0]).toMatchObject({ polls: 4, availability: 0.75, n: 0, cost: undefined });
    expect(book.scoreboard(10, 11)[0]).toMatchObject({ polls: 5, availability: 0.6 });
    expect(book.scoreboard(12, 20)).toEqual([]);
  });

  it('survives a round trip through its stored form', () => {
    const book = new ScoreBook();
    book.addPoll('s', 2, at(1), true);
    book.applyJudgment(
      { source: 's', target: 2, observedAt: at(1), tipHeight: 7 },
      judgeEstimate({ rate: 9000, target: 2, tipHeight: 7 }, [block(8, 10, 12), block(9, 2, 4)]),
      1,
    );
    const copy = new ScoreBook();
    copy.load(book.changed());
    expect(copy.scoreboard(0, 5)).toEqual(book.scoreboard(0, 5));
    expect(book.changed()).toEqual([]);
  });
});

describe('ScoreBook windows', () => {
  it('gives any window the same scores as a book that saw only that window (whole days and edge hours)', () => {
    const rng = createPrng(11);
    const events: { hour: number; source: string; target: number; tip: number; rate: number; p10: number }[] =
      [];
    for (let i = 0; i < 3000; i += 1) {
      const hour = 480_000 + rng.int(24 * 4);
      events.push({
        hour,
        source: ['a', 'b'][rng.int(2)]!,
        target: [1, 6][rng.int(2)]!,
        tip: (hour - 480_000) * 6 + rng.int(6),
        rate: 1000 + rng.int(20_000),
        p10: 1000 + rng.int(10_000),
      });
    }
    const feed = (book: ScoreBook, keep: (hour: number) => boolean) => {
      for (const e of events) {
        if (!keep(e.hour)) continue;
        const estimate = {
          source: e.source,
          target: e.target,
          observedAt: e.hour * HOUR_MS + 5,
          tipHeight: e.tip,
        };
        book.addPoll(e.source, e.target, estimate.observedAt, e.rate % 7 !== 0);
        const blocks = Array.from({ length: e.target }, (_, k) => ({
          height: e.tip + 1 + k,
          // every third block had room
          weight: (e.tip + k) % 3 === 0 ? 2_000_000 : 3_996_000,
          p10: e.p10 + 500 * k,
          p75: 2 * e.p10,
          relayMinimum: 1000,
        }));
        book.applyJudgment(
          estimate,
          judgeEstimate({ rate: e.rate, target: e.target, tipHeight: e.tip }, blocks),
          1,
        );
      }
    };
    const whole = new ScoreBook();
    feed(whole, () => true);
    for (let i = 0; i < 40; i += 1) {
      const from = 480_000 + rng.int(24 * 4);
      const to = from + rng.int(480_000 + 24 * 4 - from);
      const part = new ScoreBook();
      feed(part, (hour) => hour >= from && hour <= to);
      expect(whole.scoreboard(from, to, { cache: false })).toEqual(part.scoreboard(0, 10_000_000));
    }
  });
});

describe('unionOfWindows', () => {
  it('counts each block of overlapping windows once and skips the gaps between them', () => {
    expect(unionOfWindows([100, 101, 101], 3)).toBe(4); // 101…104
    expect(unionOfWindows([100, 110], 2)).toBe(4); // 101, 102, 111, 112
  });
});

describe('HistogramSum', () => {
  it('answers exact nearest-rank quantiles below the exact limit', () => {
    const sum = new HistogramSum();
    sum.add(
      new Map([
        [binOf(0), 2],
        [binOf(10), 1],
        [binOf(EXACT_LIMIT - 1), 1],
      ]),
    );
    expect(sum.quantiles([0.5, 0.75, 0.9])).toEqual([0, 10, EXACT_LIMIT - 1]);
  });

  it('keeps every value within 1.6 % above the exact limit', () => {
    for (const v of [256, 300, 1500, 65_535, 139_580, 2_000_000_000]) {
      expect(Math.abs(valueOfBin(binOf(v)) - v) / v).toBeLessThan(0.016);
    }
  });
});
