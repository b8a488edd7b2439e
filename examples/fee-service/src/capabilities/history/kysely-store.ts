import { type Kysely, Migrator } from 'kysely';
import { num, toBlock, toEstimate } from './kysely-rows';
import { createWriter } from './kysely-writer';
import { type HistoryDialect, historyMigrations } from './migrations';
import type { HistoryDatabase } from './schema';
import {
  type EstimateQuery,
  type HistoryStore,
  LeaseLostError,
  type StoredGap,
  type StoredScoreBucket,
} from './types';

/** Name of the one lease row: the observatory's recorder. */
const RECORDER_LEASE = 'observatory-recorder';

export interface KyselyHistoryStoreOptions {
  db: Kysely<HistoryDatabase>;
  dialect: HistoryDialect;
  /** PostgreSQL schema of the tables (created when missing). */
  schema?: string;
  /** Closes what the store opened (pool, database file). */
  onClose?: () => Promise<void>;
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
          miss_entry_sats: JSON.parse(row.miss_entry_sats) as [number, number][],
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
