import { type Kysely, Migrator, type Selectable, sql, type Transaction } from 'kysely';
import type { StoredScoreBucket } from '../../observatory/score-book';
import type { Judgment } from '../../observatory/scoring';
import { type HistoryDialect, historyMigrations } from './migrations';
import type { EstimatesTable, HistoryDatabase } from './schema';
import {
  type EstimateQuery,
  type HistoryStore,
  type HistoryWriter,
  LeaseLostError,
  type NewEstimate,
  type StoredBlock,
  type StoredEstimate,
  type StoredGap,
} from './types';

/** Name of the one lease row: the observatory's recorder. */
const RECORDER_LEASE = 'observatory-recorder';
/** Rows per multi-row insert (SQLite allows 32,766 bound values per statement). */
const CHUNK = 500;

export interface KyselyHistoryStoreOptions {
  db: Kysely<HistoryDatabase>;
  dialect: HistoryDialect;
  /** PostgreSQL schema of the tables (created when missing). */
  schema?: string;
  /** Closes what the store opened (pool, database file). */
  onClose?: () => Promise<void>;
}

function chunks<T>(items: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

const num = (value: unknown) => Number(value);

function toEstimate(row: Selectable<EstimatesTable>): StoredEstimate {
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
          }
        : undefined,
  };
}

function judgmentColumns(judgment: Judgment | undefined, unjudgeable = false) {
  if (!judgment) {
    return {
      judged: unjudgeable ? 2 : 0,
      hit: null,
      first_fit: null,
      overpay: null,
      overpayment_msat: null,
      overpayment_sats: null,
    };
  }
  return {
    judged: 1,
    hit: judgment.hit ? 1 : 0,
    first_fit: judgment.firstFit ?? null,
    overpay: judgment.overpay ? 1 : 0,
    overpayment_msat: judgment.overpaymentMsat,
    overpayment_sats: judgment.overpaymentSats,
  };
}

type BlockRow = Selectable<HistoryDatabase['observatory_blocks']>;
function toBlock(row: BlockRow): StoredBlock {
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
  };
}

function createWriter(trx: Transaction<HistoryDatabase>, schema: string | undefined): HistoryWriter {
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
        .select(['height', 'p10', 'p75'])
        .where('height', '>=', from)
        .where('height', '<=', to)
        .execute();
      return rows.map((row) => ({ height: row.height, p10: row.p10, p75: row.p75 }));
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
          return sql`(${int(id)}, ${int(c.judged)}, ${int(c.hit)}, ${int(c.first_fit)}, ${int(c.overpay)}, ${int(c.overpayment_msat)}, ${int(c.overpayment_sats)})`;
        });
        await sql`with v(id, judged, hit, first_fit, overpay, overpayment_msat, overpayment_sats) as (values ${sql.join(rows)})
          update ${estimatesTable} set judged = v.judged, hit = v.hit, first_fit = v.first_fit, overpay = v.overpay,
            overpayment_msat = v.overpayment_msat, overpayment_sats = v.overpayment_sats
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

/**
 * The history store over a Kysely instance (SQLite or PostgreSQL dialect): one implementation, the
 * same SQL shapes on both engines.
 */
export function createKyselyHistoryStore(options: KyselyHistoryStoreOptions): HistoryStore {
  const { dialect, schema } = options;
  const db = schema ? options.db.withSchema(schema) : options.db;
  let migrated: Promise<void> | undefined;

  const store: HistoryStore = {
    kind: dialect,
    migrate() {
      migrated ??= (async () => {
        if (schema) await options.db.schema.createSchema(schema).ifNotExists().execute();
        const migrator = new Migrator({
          db: db as Kysely<unknown>,
          provider: historyMigrations(dialect),
          migrationTableName: 'observatory_migrations',
          migrationLockTableName: 'observatory_migrations_lock',
          ...(schema ? { migrationTableSchema: schema } : {}),
        });
        const { error } = await migrator.migrateToLatest();
        if (error) throw error;
      })().catch((error: unknown) => {
        migrated = undefined;
        throw error;
      });
      return migrated;
    },

    async acquireLease(holder, ttlMs, now = Date.now()) {
      const row = await db
        .insertInto('observatory_lease')
        .values({ name: RECORDER_LEASE, holder, expires_at: now + ttlMs })
        .onConflict((oc) =>
          oc
            .column('name')
            .doUpdateSet({ holder, expires_at: now + ttlMs })
            .where((eb) =>
              eb.or([
                eb('observatory_lease.holder', '=', holder),
                eb('observatory_lease.expires_at', '<', now),
              ]),
            ),
        )
        .returning('holder')
        .executeTakeFirst();
      return row?.holder === holder;
    },

    async releaseLease(holder) {
      await db
        .deleteFrom('observatory_lease')
        .where('name', '=', RECORDER_LEASE)
        .where('holder', '=', holder)
        .execute();
    },

    async write(holder, ttlMs, work, now = Date.now()) {
      return db.transaction().execute(async (trx) => {
        const renewed = await trx
          .updateTable('observatory_lease')
          .set({ expires_at: now + ttlMs })
          .where('name', '=', RECORDER_LEASE)
          .where('holder', '=', holder)
          .where('expires_at', '>=', now)
          .executeTakeFirst();
        if (Number(renewed.numUpdatedRows) !== 1) throw new LeaseLostError(holder);
        return work(createWriter(trx, schema));
      });
    },

    async tip() {
      const row = await db
        .selectFrom('observatory_blocks')
        .selectAll()
        .orderBy('height', 'desc')
        .limit(1)
        .executeTakeFirst();
      return row ? toBlock(row) : undefined;
    },

    async hashes(from, to) {
      const rows = await db
        .selectFrom('observatory_blocks')
        .select(['height', 'hash'])
        .where('height', '>=', from)
        .where('height', '<=', to)
        .execute();
      return new Map(rows.map((row) => [row.height, row.hash]));
    },

    async blocks({ limit, before }) {
      let query = db.selectFrom('observatory_blocks').selectAll();
      if (before !== undefined) query = query.where('height', '<', before);
      const rows = await query.orderBy('height', 'desc').limit(limit).execute();
      return rows.map(toBlock);
    },

    async estimates(q: EstimateQuery) {
      let query = db
        .selectFrom('observatory_estimates')
        .selectAll()
        .where('observed_at', '>=', q.since)
        .where('observed_at', '<', q.until);
      if (q.source !== undefined) query = query.where('source', '=', q.source);
      if (q.target !== undefined) query = query.where('target', '=', q.target);
      if (q.after) {
        const { observedAt, id } = q.after;
        query = query.where((eb) =>
          eb.or([
            eb('observed_at', '>', observedAt),
            eb.and([eb('observed_at', '=', observedAt), eb('id', '>', id)]),
          ]),
        );
      }
      const rows = await query.orderBy('observed_at').orderBy('id').limit(q.limit).execute();
      return rows.map(toEstimate);
    },

    async bucketsAfter(seq) {
      const rows = await db
        .selectFrom('observatory_score_hours')
        .selectAll()
        .where('seq', '>', seq)
        .orderBy('seq')
        .execute();
      let newest = seq;
      const buckets = rows.map((row) => {
        newest = Math.max(newest, num(row.seq));
        return {
          source: row.source,
          target: row.target,
          hour: row.hour,
          polls: row.polls,
          valid: row.valid,
          n: row.n,
          hits: row.hits,
          overpays: row.overpays,
          overpayment_sats: JSON.parse(row.overpayment_sats) as [number, number][],
          overpayment_msat: JSON.parse(row.overpayment_msat) as [number, number][],
          tip_heights: JSON.parse(row.tip_heights) as [number, number][],
        } satisfies StoredScoreBucket;
      });
      return { buckets, seq: newest };
    },

    async gaps(from, to) {
      const rows = await db
        .selectFrom('observatory_gaps')
        .selectAll()
        .where('started_at', '<', to)
        .where((eb) => eb.or([eb('ended_at', 'is', null), eb('ended_at', '>', from)]))
        .orderBy('started_at')
        .execute();
      return rows.map(
        (row): StoredGap => ({
          id: num(row.id),
          source: row.source,
          startedAt: num(row.started_at),
          endedAt: row.ended_at === null ? undefined : num(row.ended_at),
          reason: row.reason,
        }),
      );
    },

    async lastActivity() {
      const [estimate, gap] = await Promise.all([
        db
          .selectFrom('observatory_estimates')
          .select((eb) => eb.fn.max('observed_at').as('at'))
          .executeTakeFirst(),
        db
          .selectFrom('observatory_gaps')
          .select((eb) => eb.fn.max('started_at').as('at'))
          .executeTakeFirst(),
      ]);
      const times = [estimate?.at, gap?.at].filter((t) => t !== null && t !== undefined).map(num);
      return times.length === 0 ? undefined : Math.max(...times);
    },

    async chainSummary() {
      const row = await db
        .selectFrom('observatory_blocks')
        .select((eb) => [eb.fn.countAll().as('blocks'), eb.fn.max('height').as('tip')])
        .executeTakeFirstOrThrow();
      return { blocks: num(row.blocks), tipHeight: row.tip === null ? undefined : num(row.tip) };
    },

    async counts() {
      const count = async (table: keyof HistoryDatabase) =>
        num(
          (
            await db
              .selectFrom(table)
              .select((eb) => eb.fn.countAll().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      return {
        blocks: await count('observatory_blocks'),
        estimates: await count('observatory_estimates'),
        buckets: await count('observatory_score_hours'),
        gaps: await count('observatory_gaps'),
      };
    },

    async prune(before) {
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('observatory_estimates').where('observed_at', '<', before).execute();
        await trx
          .deleteFrom('observatory_blocks')
          .where('time', '<', Math.floor(before / 1000))
          .execute();
        await trx
          .deleteFrom('observatory_score_hours')
          .where('hour', '<', Math.floor(before / 3_600_000))
          .execute();
        await trx.deleteFrom('observatory_gaps').where('ended_at', '<', before).execute();
      });
    },

    async close() {
      await options.onClose?.();
    },
  };
  return store;
}
