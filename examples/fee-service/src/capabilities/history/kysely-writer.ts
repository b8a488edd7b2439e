import { sql, type Transaction } from 'kysely';
import { chunks, judgmentColumns, num, toEstimate } from './kysely-rows';
import type { HistoryDatabase } from './schema';
import type { HistoryWriter, NewEstimate, StoredEstimate } from './types';

/**
 * What the recorder writes inside one fenced transaction of the Kysely history store
 * (`kysely-store.ts`): blocks, estimates and their judgments, score buckets, gaps.
 */
export function createWriter(trx: Transaction<HistoryDatabase>, schema: string | undefined): HistoryWriter {
  const estimatesTable = sql.table(schema ? `${schema}.observatory_estimates` : 'observatory_estimates');
  return {
    async insertBlock(block) {
      await trx
        .insertInto('observatory_blocks')
        .values({
          height: block.height,
          hash: block.hash,
          time: block.time,
          tx_count: block.tx_count,
          weight: block.weight,
          total_fee: block.total_fee,
          subsidy: block.subsidy,
          min_rate: block.min,
          p10: block.p10,
          p25: block.p25,
          p50: block.p50,
          p75: block.p75,
          p90: block.p90,
          max_rate: block.max,
          avg_fee_rate: block.avg_fee_rate,
          stats_from: block.stats_from,
          recorded_at: Date.now(),
          relay_minimum: block.relay_minimum,
        })
        .execute();
    },
    async deleteBlocksFrom(height) {
      const result = await trx
        .deleteFrom('observatory_blocks')
        .where('height', '>=', height)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
    async percentiles(from, to) {
      const rows = await trx
        .selectFrom('observatory_blocks')
        .select(['height', 'weight', 'p10', 'p75', 'relay_minimum'])
        .where('height', '>=', from)
        .where('height', '<=', to)
        .execute();
      return rows.map((row) => ({
        height: row.height,
        weight: row.weight,
        p10: row.p10,
        p75: row.p75,
        relayMinimum: row.relay_minimum,
      }));
    },
    async insertEstimates(estimates) {
      const out: StoredEstimate[] = [];
      for (const part of chunks(estimates)) {
        const rows = await trx
          .insertInto('observatory_estimates')
          .values(
            part.map((e) => ({
              source: e.source,
              target: e.target,
              rate: e.rate,
              observed_at: e.observedAt,
              tip_height: e.tipHeight,
              window_end: e.tipHeight + e.target,
              judged: 0,
            })),
          )
          .returning('id')
          .execute();
        rows.forEach((row, i) => {
          out.push({ ...(part[i] as NewEstimate), id: num(row.id), status: 'pending', judgment: undefined });
        });
      }
      return out;
    },
    async estimatesReadyAt(height) {
      const rows = await trx
        .selectFrom('observatory_estimates')
        .selectAll()
        .where('window_end', '<=', height)
        .where('judged', '=', 0)
        .orderBy('id')
        .execute();
      return rows.map(toEstimate);
    },
    async judgedReaching(height) {
      const rows = await trx
        .selectFrom('observatory_estimates')
        .selectAll()
        .where('window_end', '>=', height)
        .where('judged', '=', 1)
        .orderBy('id')
        .execute();
      return rows.map(toEstimate);
    },
    async setJudgments(updates) {
      // One statement per chunk (a row of VALUES per estimate), not one round trip per estimate.
      for (const part of chunks(updates, 200)) {
        const rows = part.map(({ id, judgment, unjudgeable }) => {
          const c = judgmentColumns(judgment, unjudgeable);
          const int = (value: number | null) => sql`cast(${value} as bigint)`;
          return sql`(${int(id)}, ${int(c.judged)}, ${int(c.hit)}, ${int(c.first_fit)}, ${int(c.overpay)}, ${int(c.overpayment_msat)}, ${int(c.overpayment_sats)}, ${int(c.entry_msat)})`;
        });
        await sql`with v(id, judged, hit, first_fit, overpay, overpayment_msat, overpayment_sats, entry_msat) as (values ${sql.join(rows)})
          update ${estimatesTable} set judged = v.judged, hit = v.hit, first_fit = v.first_fit, overpay = v.overpay,
            overpayment_msat = v.overpayment_msat, overpayment_sats = v.overpayment_sats, entry_msat = v.entry_msat
          from v where ${estimatesTable}.id = v.id`.execute(trx);
      }
    },
    async putBuckets(buckets) {
      if (buckets.length === 0) return;
      const { max } = await trx
        .selectFrom('observatory_score_hours')
        .select((eb) => eb.fn.max('seq').as('max'))
        .executeTakeFirstOrThrow();
      const seq = (max === null ? 0 : Number(max)) + 1;
      for (const part of chunks(buckets, 200)) {
        await trx
          .insertInto('observatory_score_hours')
          .values(
            part.map((b) => ({
              source: b.source,
              target: b.target,
              hour: b.hour,
              polls: b.polls,
              valid: b.valid,
              n: b.n,
              hits: b.hits,
              overpays: b.overpays,
              overpayment_sats: JSON.stringify(b.overpayment_sats),
              overpayment_msat: JSON.stringify(b.overpayment_msat),
              miss_entry_sats: JSON.stringify(b.miss_entry_sats),
              tip_heights: JSON.stringify(b.tip_heights),
              seq,
            })),
          )
          .onConflict((oc) =>
            oc.columns(['source', 'target', 'hour']).doUpdateSet((eb) => ({
              polls: eb.ref('excluded.polls'),
              valid: eb.ref('excluded.valid'),
              n: eb.ref('excluded.n'),
              hits: eb.ref('excluded.hits'),
              overpays: eb.ref('excluded.overpays'),
              overpayment_sats: eb.ref('excluded.overpayment_sats'),
              overpayment_msat: eb.ref('excluded.overpayment_msat'),
              miss_entry_sats: eb.ref('excluded.miss_entry_sats'),
              tip_heights: eb.ref('excluded.tip_heights'),
              seq: eb.ref('excluded.seq'),
            })),
          )
          .execute();
      }
    },
    async openGap(source, at, reason) {
      const open = await trx
        .selectFrom('observatory_gaps')
        .select('id')
        .where('source', '=', source)
        .where('ended_at', 'is', null)
        .executeTakeFirst();
      if (open) return false;
      await trx
        .insertInto('observatory_gaps')
        .values({ source, started_at: at, ended_at: null, reason })
        .execute();
      return true;
    },
    async closeGap(source, at) {
      await trx
        .updateTable('observatory_gaps')
        .set({ ended_at: at })
        .where('source', '=', source)
        .where('ended_at', 'is', null)
        .execute();
    },
    async insertGap(gap) {
      await trx
        .insertInto('observatory_gaps')
        .values({
          source: gap.source,
          started_at: gap.startedAt,
          ended_at: gap.endedAt ?? null,
          reason: gap.reason,
        })
        .execute();
    },
  };
}
