// The verdicts of the benchmark's targets table (bench/targets.ts): met, missed and not measured
// on the figures the sections record, with the floor rows beside a missed target.
import { describe, expect, it } from 'vitest';
import type { BenchReport } from '../bench/bench-report';
import type { DevnetRun } from '../bench/devnet';
import type { CaseResult } from '../bench/lib/http-case';
import type { MicroResult } from '../bench/lib/measure';
import { spread } from '../bench/lib/stats';
import { type TargetRow, targets } from '../bench/targets';

/** A case whose rounds used `cpuUs` of server CPU per request, `cpuRatio` its capacity against bare. */
function httpCase(id: string, cpuUs: number[], bareUs?: number[]): CaseResult {
  const s = spread(cpuUs);
  return {
    id,
    samples: cpuUs.map((cpu) => ({ cpuUs: cpu, rps: 1_000_000 / cpu })),
    cpuUs: s,
    ...(bareUs
      ? {
          cpuRatio: spread(cpuUs.map((c, i) => bareUs[i]! / c)),
          extraCpuUs: spread(cpuUs.map((c, i) => c - bareUs[i]!)),
        }
      : {}),
  } as CaseResult;
}

function micro(name: string, wallUs: number, extra: Partial<MicroResult> = {}): MicroResult {
  return {
    group: 'durable ledger stores',
    name,
    wallUs: spread([wallUs]),
    cpuUs: spread([wallUs / 2]),
    opsPerBatch: 1,
    ...extra,
  };
}

function run(facilitator: string, perSecond: number, balancesOk = true): DevnetRun {
  return {
    facilitator,
    perSecond,
    payments: 100,
    ok: 100,
    failed: 0,
    balancesOk,
    p50Ms: 90,
    p99Ms: 200,
    problems: [],
  } as unknown as DevnetRun;
}

function report(part: Partial<BenchReport>): BenchReport {
  return { machine: { cpus: 2 }, ...part } as BenchReport;
}

const row = (rows: TargetRow[], starts: string) => {
  const found = rows.filter((r) => r.target.startsWith(starts));
  expect(found, starts).toHaveLength(1);
  return found[0]!;
};

describe('benchmark targets', () => {
  it('says "not measured" for every target of a section that did not run, never met', () => {
    const rows = targets(report({}));
    for (const starts of [
      'Paid path ≤ 150 µs',
      '402 path ≥ 95 % of its floor row, a bare handler writing the same bytes (Fastify 5)',
      'Idempotent replay ≥ 95 % of its floor row, a bare handler writing the same bytes (Koa 3)',
      'Fee preview ≥ 95 %',
      'Pass-through ≥ 97 % of bare (Express 5)',
      'Durable ledger: ≤ 2 synchronous commits',
      "Durable ledger: PostgreSQL's wall",
      '402 path ≥ 1.5×',
      'Devnet settlements ≥ 3×',
    ])
      expect(row(rows, starts).verdict, starts).toBe('not measured');
  });

  it('judges the 402 and the replay against their floor rows, and shows the floor row beside the figure', () => {
    const bare = [10, 10, 10];
    const rows = targets(
      report({
        http: {
          cases: [
            httpCase('fastify/bare', bare),
            // The floor row reads 80 % of bare; the gate's 402 96 % of the floor row: met.
            httpCase('fastify/bytes402', [12.5, 12.5, 12.5], bare),
            httpCase('fastify/402', [13, 13, 13], bare),
            // Replay at 80 % of its floor: missed.
            httpCase('fastify/bytesreplay', [10, 10, 10], bare),
            httpCase('fastify/replay', [12.5, 12.5, 12.5], bare),
          ],
        } as never,
      }),
    );
    const challenge = row(
      rows,
      '402 path ≥ 95 % of its floor row, a bare handler writing the same bytes (Fastify 5)',
    );
    expect(challenge.verdict).toBe('met');
    expect(challenge.figure).toMatch(/^96\.2 % .* of the floor row; .* the floor row itself 80\.0 %/);
    const replay = row(
      rows,
      'Idempotent replay ≥ 95 % of its floor row, a bare handler writing the same bytes (Fastify 5)',
    );
    expect(replay.verdict).toBe('missed');
    expect(replay.figure).toMatch(/^80\.0 % .*the floor row itself 100\.0 %/);
    expect(replay.why).toMatch(/the floor row 10 µs/);
    // Express and Koa did not run.
    expect(
      row(rows, '402 path ≥ 95 % of its floor row, a bare handler writing the same bytes (Express 5)')
        .verdict,
    ).toBe('not measured');
  });

  it('judges the paid path on the worst framework', () => {
    const bare = [50, 50, 50];
    const http = (koaUs: number) =>
      ({
        cases: [
          httpCase('express/paid', [180, 180, 180], bare),
          httpCase('fastify/paid', [170, 170, 170], bare),
          httpCase('koa/paid', [koaUs, koaUs, koaUs], bare),
        ],
      }) as never;
    expect(row(targets(report({ http: http(190) })), 'Paid path').verdict).toBe('met');
    const missed = row(targets(report({ http: http(201) })), 'Paid path');
    expect(missed.verdict).toBe('missed');
    expect(missed.figure).toMatch(/^worst 151 µs/);
  });

  it('judges pass-through at 97 % of bare and shows the no-op row', () => {
    const bare = [100, 100, 100];
    const http = (passUs: number) =>
      ({
        cases: [
          httpCase('koa/pass', [passUs, passUs, passUs], bare),
          httpCase('koa/noop', [101, 101, 101], bare),
        ],
      }) as never;
    expect(row(targets(report({ http: http(103) })), 'Pass-through ≥ 97 % of bare (Koa 3)').verdict).toBe(
      'met',
    );
    const missed = row(targets(report({ http: http(104) })), 'Pass-through ≥ 97 % of bare (Koa 3)');
    expect(missed.verdict).toBe('missed');
    expect(missed.figure).toMatch(/floor row \(one no-op middleware\) 99\.0 %/);
  });

  it('judges the fee preview against the responder alone', () => {
    const http = (serviceUs: number) =>
      ({
        cases: [
          httpCase('fee/bare', [20, 20, 20], [19, 19, 19]),
          httpCase('fee/preview', [serviceUs, serviceUs, serviceUs], [19, 19, 19]),
        ],
      }) as never;
    expect(row(targets(report({ http: http(21) })), 'Fee preview').verdict).toBe('met');
    expect(row(targets(report({ http: http(21.1) })), 'Fee preview').verdict).toBe('missed');
  });

  it('judges the durable ledger only on the commits and the wall the stores section recorded', () => {
    const paid = 'claim + 3 state changes (one paid request)';
    const rows = (sqliteCommits: number | undefined, pgWall: number, before?: number) =>
      targets(
        report({
          micro: {
            notes: [],
            results: [
              micro(
                `SQLite (file, WAL): ${paid}`,
                150,
                sqliteCommits === undefined ? {} : { syncCommits: sqliteCommits },
              ),
              micro(`PostgreSQL: ${paid}`, pgWall, {
                syncCommits: 2,
                ...(before === undefined ? {} : { beforeWallUs: spread([before]) }),
              }),
            ],
          },
        }),
      );
    const commits = 'Durable ledger: ≤ 2 synchronous commits';
    const wall = "Durable ledger: PostgreSQL's wall";
    expect(row(rows(2, 700, 1400), commits).verdict).toBe('met');
    expect(row(rows(2, 700, 1400), wall).verdict).toBe('met');
    expect(row(rows(3, 701, 1400), commits).verdict).toBe('missed');
    expect(row(rows(3, 701, 1400), wall).verdict).toBe('missed');
    // SQLite's count absent: not judged on PostgreSQL alone; no "before" row: the wall is not measured.
    expect(row(rows(undefined, 700), commits).verdict).toBe('not measured');
    expect(row(rows(undefined, 700), wall).verdict).toBe('not measured');
  });

  it('judges the 402 against the official middleware at 1.5× and shows the floor row', () => {
    const http = (oursUs: number) =>
      ({
        cases: [
          httpCase('express/402', [oursUs, oursUs, oursUs]),
          httpCase('x402/402', [150, 150, 150]),
          httpCase('express/bytes402', [96, 96, 96]),
        ],
      }) as never;
    expect(row(targets(report({ http: http(100) })), '402 path ≥ 1.5×').verdict).toBe('met');
    const missed = row(targets(report({ http: http(101) })), '402 path ≥ 1.5×');
    expect(missed.verdict).toBe('missed');
    expect(missed.figure).toMatch(/^1\.49× .*floor row .* 1\.56×/);
  });

  it('judges the devnet at 3× the official facilitator, and wrong balances as missed', () => {
    const devnet = (ours: DevnetRun) =>
      report({
        devnet: {
          payers: 20,
          paymentsPerPayer: 5,
          notes: [],
          runs: [ours, run('official x402Facilitator', 90)],
        },
      });
    expect(row(targets(devnet(run('Tollbooth in-process', 270))), 'Devnet').verdict).toBe('met');
    expect(row(targets(devnet(run('Tollbooth in-process', 269))), 'Devnet').verdict).toBe('missed');
    expect(row(targets(devnet(run('Tollbooth in-process', 400, false))), 'Devnet').verdict).toBe('missed');
    expect(row(targets(devnet(run('Tollbooth in-process', 270))), 'Devnet').figure).toMatch(
      /^3\.00×: 270\.0\/s vs official 90\.0\/s/,
    );
  });
});
