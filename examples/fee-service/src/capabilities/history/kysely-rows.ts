import type { Selectable } from 'kysely';
import type { EstimatesTable, HistoryDatabase } from './schema';
import type { Judgment, StoredBlock, StoredEstimate } from './types';

/** Conversions between the history's rows and its values, shared by the store and its writer. */

/** Rows per multi-row insert (SQLite allows 32,766 bound values per statement). */
export const CHUNK = 500;

export function chunks<T>(items: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export const num = (value: unknown) => Number(value);

export function toEstimate(row: Selectable<EstimatesTable>): StoredEstimate {
  return {
    id: num(row.id),
    source: row.source,
    target: row.target,
    rate: row.rate,
    observedAt: num(row.observed_at),
    tipHeight: row.tip_height,
    status: row.judged === 1 ? 'judged' : row.judged === 2 ? 'unjudgeable' : 'pending',
    judgment:
      row.judged === 1
        ? {
            hit: row.hit === 1,
            firstFit: row.first_fit ?? undefined,
            overpay: row.overpay === 1,
            overpaymentMsat: row.overpayment_msat ?? 0,
            overpaymentSats: num(row.overpayment_sats ?? 0),
            entryMsat: row.entry_msat ?? 0,
          }
        : undefined,
  };
}

export function judgmentColumns(judgment: Judgment | undefined, unjudgeable = false) {
  if (!judgment) {
    return {
      judged: unjudgeable ? 2 : 0,
      hit: null,
      first_fit: null,
      overpay: null,
      overpayment_msat: null,
      overpayment_sats: null,
      entry_msat: null,
    };
  }
  return {
    judged: 1,
    hit: judgment.hit ? 1 : 0,
    first_fit: judgment.firstFit ?? null,
    overpay: judgment.overpay ? 1 : 0,
    overpayment_msat: judgment.overpaymentMsat,
    overpayment_sats: judgment.overpaymentSats,
    entry_msat: judgment.entryMsat,
  };
}

type BlockRow = Selectable<HistoryDatabase['observatory_blocks']>;
export function toBlock(row: BlockRow): StoredBlock {
  return {
    height: row.height,
    hash: row.hash,
    time: num(row.time),
    tx_count: row.tx_count,
    weight: row.weight,
    total_fee: num(row.total_fee),
    subsidy: num(row.subsidy),
    min: row.min_rate,
    p10: row.p10,
    p25: row.p25,
    p50: row.p50,
    p75: row.p75,
    p90: row.p90,
    max: row.max_rate,
    avg_fee_rate: row.avg_fee_rate,
    stats_from: row.stats_from as StoredBlock['stats_from'],
    relay_minimum: row.relay_minimum,
  };
}
