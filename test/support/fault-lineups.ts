// The framework × ledger lineups the charged ⇒ served fault files run on (FAULT_MATRIX), and a
// fresh ledger for each: a SQLite file, or a PostgreSQL database of its own dropped afterwards.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import type { Framework } from './fault-harness';
import { DATABASE_URL } from './ledger-harness';

export type Store = 'sqlite' | 'postgres';
export interface Lineup {
  framework: Framework;
  store: Store;
}
export const ALL_PAIRS: Lineup[] = (['fastify', 'express', 'koa'] as const).flatMap((framework) =>
  (['sqlite', 'postgres'] as const).map((store) => ({ framework, store })),
);
/** Every fault on every framework, the ledgers spread over them. */
export const SPREAD: Lineup[] = [
  { framework: 'fastify', store: 'sqlite' },
  { framework: 'express', store: 'postgres' },
  { framework: 'koa', store: 'sqlite' },
];

/**
 * FAULT_MATRIX: unset (`byDefault`: the lineups `npm test` runs), `spread` (one lineup per
 * framework, both ledgers), `full` (all six pairs) or a list such as `koa-postgres,express-sqlite`.
 */
export function lineups(setting: string | undefined, byDefault: Lineup[]): Lineup[] {
  if (!setting) return byDefault;
  if (setting === 'spread') return SPREAD;
  if (setting === 'full') return ALL_PAIRS;
  return setting.split(',').map((name) => {
    const found = ALL_PAIRS.find((pair) => `${pair.framework}-${pair.store}` === name.trim());
    if (!found) throw new Error(`FAULT_MATRIX: ${name} is not spread, full or a framework-store pair`);
    return found;
  });
}

export const lineupName = ({ framework, store }: Lineup) =>
  `${framework} on ${store === 'sqlite' ? 'SQLite' : 'PostgreSQL'}`;

/** Fresh ledgers in `dir` (SQLite) or on the PostgreSQL server (one database each, dropped by `drop`). */
export function ledgerFactory(dir: string) {
  const databases: string[] = [];
  return {
    async create(store: Store, label: string): Promise<string> {
      if (store === 'sqlite') return `sqlite:${join(dir, `${label}.sqlite`)}`;
      const name = `tollbooth_fault_${randomBytes(5).toString('hex')}`;
      const admin = new pg.Client({ connectionString: DATABASE_URL });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE "${name}"`);
      } finally {
        await admin.end();
      }
      databases.push(name);
      const url = new URL(DATABASE_URL);
      url.pathname = `/${name}`;
      return url.toString();
    },
    async drop(): Promise<void> {
      if (databases.length === 0) return;
      const admin = new pg.Client({ connectionString: DATABASE_URL });
      await admin.connect();
      try {
        for (const name of databases) await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    },
  };
}
