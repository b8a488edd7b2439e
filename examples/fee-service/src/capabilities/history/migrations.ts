import type { Kysely, Migration, MigrationProvider } from 'kysely';
import type { HistoryDatabase } from './schema';

/** Which SQL engine a migration writes for (ids and 64-bit integers differ). */
export type HistoryDialect = 'sqlite' | 'postgres';

/**
 * The history's migrations, in order. Append new ones; never edit one that has shipped (a
 * database remembers which it ran, by name).
 */
export function historyMigrations(dialect: HistoryDialect): MigrationProvider {
  const big = dialect === 'postgres' ? 'bigint' : 'integer';
  const id = dialect === 'postgres' ? 'bigserial' : 'integer';
  const migrations: Record<string, Migration> = {
    '2026_11_26_001_observatory': {
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('observatory_blocks')
          .addColumn('height', 'integer', (c) => c.primaryKey())
          .addColumn('hash', 'text', (c) => c.notNull())
          .addColumn('time', big, (c) => c.notNull())
          .addColumn('tx_count', 'integer', (c) => c.notNull())
          .addColumn('weight', 'integer', (c) => c.notNull())
          .addColumn('total_fee', big, (c) => c.notNull())
          .addColumn('subsidy', big, (c) => c.notNull())
          .addColumn('min_rate', 'integer', (c) => c.notNull())
          .addColumn('p10', 'integer', (c) => c.notNull())
          .addColumn('p25', 'integer', (c) => c.notNull())
          .addColumn('p50', 'integer', (c) => c.notNull())
          .addColumn('p75', 'integer', (c) => c.notNull())
          .addColumn('p90', 'integer', (c) => c.notNull())
          .addColumn('max_rate', 'integer', (c) => c.notNull())
          .addColumn('avg_fee_rate', 'integer', (c) => c.notNull())
          .addColumn('stats_from', 'text', (c) => c.notNull())
          .addColumn('recorded_at', big, (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex('observatory_blocks_time_idx')
          .on('observatory_blocks')
          .column('time')
          .execute();

        await db.schema
          .createTable('observatory_estimates')
          .addColumn('id', id, (c) =>
            dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
          )
          .addColumn('source', 'text', (c) => c.notNull())
          .addColumn('target', 'integer', (c) => c.notNull())
          .addColumn('rate', 'integer', (c) => c.notNull())
          .addColumn('observed_at', big, (c) => c.notNull())
          .addColumn('tip_height', 'integer', (c) => c.notNull())
          .addColumn('window_end', 'integer', (c) => c.notNull())
          .addColumn('judged', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('hit', 'integer')
          .addColumn('first_fit', 'integer')
          .addColumn('overpay', 'integer')
          .addColumn('overpayment_msat', 'integer')
          .addColumn('overpayment_sats', big)
          .execute();
        await db.schema
          .createIndex('observatory_estimates_time_idx')
          .on('observatory_estimates')
          .columns(['observed_at', 'id'])
          .execute();
        await db.schema
          .createIndex('observatory_estimates_row_idx')
          .on('observatory_estimates')
          .columns(['source', 'target', 'observed_at', 'id'])
          .execute();
        await db.schema
          .createIndex('observatory_estimates_window_idx')
          .on('observatory_estimates')
          .columns(['window_end', 'judged'])
          .execute();

        await db.schema
          .createTable('observatory_score_hours')
          .addColumn('source', 'text', (c) => c.notNull())
          .addColumn('target', 'integer', (c) => c.notNull())
          .addColumn('hour', 'integer', (c) => c.notNull())
          .addColumn('polls', 'integer', (c) => c.notNull())
          .addColumn('valid', 'integer', (c) => c.notNull())
          .addColumn('n', 'integer', (c) => c.notNull())
          .addColumn('hits', 'integer', (c) => c.notNull())
          .addColumn('overpays', 'integer', (c) => c.notNull())
          .addColumn('overpayment_sats', 'text', (c) => c.notNull())
          .addColumn('overpayment_msat', 'text', (c) => c.notNull())
          .addColumn('tip_heights', 'text', (c) => c.notNull())
          .addColumn('seq', big, (c) => c.notNull())
          .addPrimaryKeyConstraint('observatory_score_hours_pk', ['source', 'target', 'hour'])
          .execute();
        await db.schema
          .createIndex('observatory_score_hours_seq_idx')
          .on('observatory_score_hours')
          .column('seq')
          .execute();

        await db.schema
          .createTable('observatory_gaps')
          .addColumn('id', id, (c) =>
            dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
          )
          .addColumn('source', 'text', (c) => c.notNull())
          .addColumn('started_at', big, (c) => c.notNull())
          .addColumn('ended_at', big)
          .addColumn('reason', 'text', (c) => c.notNull())
          .execute();
        await db.schema
          .createIndex('observatory_gaps_time_idx')
          .on('observatory_gaps')
          .columns(['started_at'])
          .execute();

        await db.schema
          .createTable('observatory_lease')
          .addColumn('name', 'text', (c) => c.primaryKey())
          .addColumn('holder', 'text', (c) => c.notNull())
          .addColumn('expires_at', big, (c) => c.notNull())
          .execute();
      },
      async down(db: Kysely<unknown>) {
        for (const table of [
          'observatory_lease',
          'observatory_gaps',
          'observatory_score_hours',
          'observatory_estimates',
          'observatory_blocks',
        ]) {
          await db.schema.dropTable(table).ifExists().execute();
        }
      },
    },
    /**
     * The rule "would have been included" (docs/fee-rules.md#would-have-been-included) needs each
     * block's relay minimum: blocks recorded before it get 1 sat/vB, the relay minimum of every
     * Bitcoin Core release before 29.1. A judgment keeps the rate that would have made it
     * (`entry_msat`), a score bucket its misses' entry fees (the cost's miss penalty). Every
     * judgment made by the earlier rule (q ≥ p10 of any block) goes back to pending and its score
     * buckets lose their judgments (polls stay), so the recorder judges them again by the new rule
     * on its next tick.
     */
    '2026_12_02_002_inclusion_rule': {
      async up(raw: Kysely<unknown>) {
        const db = raw as unknown as Kysely<HistoryDatabase>;
        await db.schema
          .alterTable('observatory_blocks')
          .addColumn('relay_minimum', 'integer', (c) => c.notNull().defaultTo(1000))
          .execute();
        await db.schema.alterTable('observatory_estimates').addColumn('entry_msat', 'integer').execute();
        await db.schema
          .alterTable('observatory_score_hours')
          .addColumn('miss_entry_sats', 'text', (c) => c.notNull().defaultTo('[]'))
          .execute();
        await db
          .updateTable('observatory_estimates')
          .set({
            judged: 0,
            hit: null,
            first_fit: null,
            overpay: null,
            overpayment_msat: null,
            overpayment_sats: null,
            entry_msat: null,
          })
          .where('judged', '=', 1)
          .execute();
        await db
          .updateTable('observatory_score_hours')
          .set({
            n: 0,
            hits: 0,
            overpays: 0,
            overpayment_sats: '[]',
            overpayment_msat: '[]',
            tip_heights: '[]',
          })
          .execute();
      },
      async down(raw: Kysely<unknown>) {
        await raw.schema.alterTable('observatory_score_hours').dropColumn('miss_entry_sats').execute();
        await raw.schema.alterTable('observatory_estimates').dropColumn('entry_msat').execute();
        await raw.schema.alterTable('observatory_blocks').dropColumn('relay_minimum').execute();
      },
    },
  };
  return { getMigrations: async () => migrations };
}
