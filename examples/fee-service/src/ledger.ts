import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { LedgerStore } from '@tollbooth/core';
import { createPostgresLedgerStore } from '@tollbooth/store-postgres';
import { createRedisLedgerStore } from '@tollbooth/store-redis';
import { createSqliteLedgerStore } from '@tollbooth/store-sqlite';
import type { Redis } from 'ioredis';

/**
 * Opens the settlement ledger named by `LEDGER_URL`: `sqlite:<file>` (embedded default; the
 * directory is created), `redis://…` or `postgres://…` (several instances behind a load balancer).
 * @param options.redis the client of a `redis://` ledger, when the caller opened it (and closes it)
 * @param options.logger where a PostgreSQL ledger reports its lost idle connections
 * @example const ledger = openLedger('sqlite:.tollbooth/ledger.sqlite');
 */
export function openLedger(
  url: string,
  options: { cwd?: string; redis?: Redis; logger?: { warn(fields: object, message: string): void } } = {},
): LedgerStore {
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length);
    if (file === ':memory:') return createSqliteLedgerStore({ filename: ':memory:' });
    const filename = resolve(options.cwd ?? process.cwd(), file);
    mkdirSync(dirname(filename), { recursive: true });
    return createSqliteLedgerStore({ filename });
  }
  if (/^rediss?:\/\//.test(url)) return createRedisLedgerStore({ redis: options.redis ?? url });
  if (/^postgres(ql)?:\/\//.test(url)) {
    return createPostgresLedgerStore({
      connectionString: url,
      ...(options.logger ? { logger: options.logger } : {}),
    });
  }
  throw new TypeError(`unsupported LEDGER_URL ${url}: use sqlite:<file>, redis://… or postgres://…`);
}

/** The ledger kind for logs (never the URL: it may hold credentials). */
export function ledgerKind(url: string): 'sqlite' | 'redis' | 'postgres' {
  return url.startsWith('sqlite:') ? 'sqlite' : url.startsWith('redis') ? 'redis' : 'postgres';
}
