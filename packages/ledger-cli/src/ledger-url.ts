import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type LedgerStore, TollboothError } from '@tollbooth/core';
import { createPostgresLedgerStore } from '@tollbooth/store-postgres';
import { createRedisLedgerStore } from '@tollbooth/store-redis';
import { createSqliteLedgerStore } from '@tollbooth/store-sqlite';
import { Redis } from 'ioredis';
import pg from 'pg';

/** Where a ledger lives, parsed from a URL by {@link parseLedgerUrl}. */
export type LedgerLocation =
  | { kind: 'sqlite'; filename: string; tableName?: string }
  | { kind: 'redis'; url: string; keyPrefix?: string }
  | { kind: 'postgres'; connectionString: string; schema?: string; tableName?: string };

/** Options of {@link openLedgerStore}. */
export interface OpenLedgerStoreOptions {
  /** How long to wait for Redis or Postgres to answer, ms. Default 5 000. */
  connectTimeoutMs?: number;
  /** SQLite only: refuse a file that does not exist yet (instead of creating an empty ledger). Default true. */
  mustExist?: boolean;
}

export const OPEN_LEDGER_STORE_DEFAULTS = { connectTimeoutMs: 5_000, mustExist: true } as const;

/** The URL forms {@link parseLedgerUrl} understands, for error messages and help. */
export const LEDGER_URL_FORMS = [
  'sqlite:./path/ledger.db[?table=name]   (or a plain file path, or file:///abs/ledger.db)',
  'redis://[user:pass@]host:port[/db][?prefix=tollbooth:ledger:]   (rediss:// for TLS)',
  'postgres://user@host:port/database[?schema=public&table=tollbooth_ledger]',
] as const;

const SCHEME = /^([a-z][a-z0-9+.-]*):/i;

function invalid(message: string): TollboothError {
  return new TollboothError(
    'invalid_config',
    `${message}\nSupported ledger URLs:\n  ${LEDGER_URL_FORMS.join('\n  ')}`,
  );
}

/** Removes known query parameters from a URL, returning them and the remaining URL. */
function takeParams(raw: string, names: readonly string[]): { url: string; params: Record<string, string> } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid(`not a valid URL: ${redactLedgerUrl(raw)}`);
  }
  const params: Record<string, string> = {};
  for (const name of names) {
    const value = url.searchParams.get(name);
    if (value !== null) {
      if (value === '') throw invalid(`the ${name} parameter is empty in ${redactLedgerUrl(raw)}`);
      params[name] = value;
      url.searchParams.delete(name);
    }
  }
  return { url: url.toString(), params };
}

/** The store with `close` also ending the connection this module opened. */
function closing(store: LedgerStore, end: () => Promise<void>): LedgerStore {
  return {
    claim: (entry) => store.claim(entry),
    get: (id) => store.get(id),
    update: (id, expect, patch) => store.update(id, expect, patch),
    remove: (id, expect) => store.remove(id, expect),
    query: (query) => store.query(query),
    bindIdentifier: (binding, replaces) => store.bindIdentifier(binding, replaces),
    getIdentifier: (key) => store.getIdentifier(key),
    purgeExpired: (now) => store.purgeExpired(now),
    // The sign-in part (docs/sign-in-with-x.md): a gate on this store grants and uses access.
    ...(store.grantAccess ? { grantAccess: (grant) => store.grantAccess!(grant) } : {}),
    ...(store.useAccess ? { useAccess: (use) => store.useAccess!(use) } : {}),
    ...(store.returnAccess ? { returnAccess: (payment) => store.returnAccess!(payment) } : {}),
    ...(store.claimNonce ? { claimNonce: (nonce, expiresAt) => store.claimNonce!(nonce, expiresAt) } : {}),
    ...(store.queryAccess ? { queryAccess: (query) => store.queryAccess!(query) } : {}),
    close: async () => {
      try {
        await store.close();
      } finally {
        await end();
      }
    },
  };
}

function sqlitePath(rest: string, original: string): LedgerLocation {
  const [pathPart, query] = splitQuery(rest);
  const filename = pathPart.startsWith('//') ? pathPart.slice(2) : pathPart;
  if (filename === '') throw invalid(`no file path in ${original}`);
  const location: LedgerLocation = { kind: 'sqlite', filename: resolve(decodeURIComponent(filename)) };
  if (query !== undefined) {
    const params = new URLSearchParams(query);
    for (const key of params.keys())
      if (key !== 'table') throw invalid(`unknown SQLite parameter "${key}" in ${original}`);
    const table = params.get('table');
    if (table !== null) {
      if (table === '') throw invalid(`the table parameter is empty in ${original}`);
      location.tableName = table;
    }
  }
  return location;
}

function splitQuery(value: string): [string, string | undefined] {
  const at = value.indexOf('?');
  return at < 0 ? [value, undefined] : [value.slice(0, at), value.slice(at + 1)];
}

/**
 * Parses a ledger URL: `sqlite:./ledger.db` (or a plain path, or a `file:` URL), `redis://…`
 * (`?prefix=` for the key prefix) or `postgres://…` (`?schema=` and `?table=`).
 *
 * @throws TollboothError `invalid_config` naming the problem and listing the supported forms.
 * @example
 * parseLedgerUrl('sqlite:./data/ledger.db'); // { kind: 'sqlite', filename: '/abs/data/ledger.db' }
 */
export function parseLedgerUrl(value: string): LedgerLocation {
  const raw = value?.trim() ?? '';
  if (raw === '') throw invalid('no ledger URL given');
  const scheme = SCHEME.exec(raw)?.[1]?.toLowerCase();
  // A one-letter "scheme" is a Windows drive letter: a path.
  if (scheme === undefined || scheme.length === 1) return sqlitePath(raw, raw);
  switch (scheme) {
    case 'sqlite':
    case 'sqlite3':
      return sqlitePath(raw.slice(scheme.length + 1), raw);
    case 'file': {
      const [pathPart, query] = splitQuery(raw);
      let filename: string;
      try {
        filename = fileURLToPath(pathPart);
      } catch (error) {
        throw invalid(`not a valid file URL: ${raw} (${(error as Error).message})`);
      }
      return sqlitePath(query === undefined ? filename : `${filename}?${query}`, raw);
    }
    case 'redis':
    case 'rediss': {
      const { url, params } = takeParams(raw, ['prefix']);
      const location: LedgerLocation = { kind: 'redis', url };
      if (params['prefix'] !== undefined) location.keyPrefix = params['prefix'];
      return location;
    }
    case 'postgres':
    case 'postgresql': {
      const { url, params } = takeParams(raw, ['schema', 'table']);
      const location: LedgerLocation = { kind: 'postgres', connectionString: url };
      if (params['schema'] !== undefined) location.schema = params['schema'];
      if (params['table'] !== undefined) location.tableName = params['table'];
      return location;
    }
    default:
      throw invalid(`unsupported ledger URL scheme "${scheme}:"`);
  }
}

/** Query parameters whose value is a credential (`?password=…`, `?sslpassword=…`, `?token=…`). */
const SECRET_PARAM = /pass|secret|token|key|auth|credential/i;

/**
 * A URL for messages: the password of its user-info and the value of every query parameter that
 * names a credential replaced by `***`. A text that does not parse as a URL is masked the same way
 * by pattern, so an error about a malformed URL does not print its password either.
 */
export function redactLedgerUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return value
      .replace(/(\/\/[^/@?#:]*:)[^@/?#]*@/, '$1***@')
      .replace(/([?&][^=&#]*=)[^&#]*/g, (match, name: string) =>
        SECRET_PARAM.test(name) ? `${name}***` : match,
      );
  }
  if (url.protocol === 'sqlite:' || url.protocol === 'sqlite3:' || url.protocol === 'file:') return value;
  if (url.password) url.password = '***';
  for (const name of [...url.searchParams.keys()])
    if (SECRET_PARAM.test(name)) url.searchParams.set(name, '***');
  return url.toString();
}

/**
 * Opens the ledger store a URL names, for reading. SQLite: the file must exist (unless
 * `mustExist: false`); Redis and Postgres: the server must answer within `connectTimeoutMs`.
 * Automatic purging is off: an inspection never deletes anything. Close the store when done.
 *
 * @throws TollboothError `invalid_config` for a bad URL or a missing file, `ledger_unavailable`
 * when the server does not answer.
 * @example
 * const store = await openLedgerStore('redis://127.0.0.1:6379');
 * try { console.log(await store.query({ state: 'uncertain' })); } finally { await store.close(); }
 */
export async function openLedgerStore(
  url: string | LedgerLocation,
  options: OpenLedgerStoreOptions = {},
): Promise<LedgerStore> {
  const location = typeof url === 'string' ? parseLedgerUrl(url) : url;
  const connectTimeoutMs = options.connectTimeoutMs ?? OPEN_LEDGER_STORE_DEFAULTS.connectTimeoutMs;
  const mustExist = options.mustExist ?? OPEN_LEDGER_STORE_DEFAULTS.mustExist;
  switch (location.kind) {
    case 'sqlite': {
      if (mustExist && !existsSync(location.filename)) {
        throw new TollboothError(
          'invalid_config',
          `no SQLite ledger at ${location.filename} (the file does not exist)`,
        );
      }
      if (existsSync(location.filename) && !statSync(location.filename).isFile()) {
        throw new TollboothError('invalid_config', `${location.filename} is not a file`);
      }
      return createSqliteLedgerStore({
        filename: location.filename,
        purgeIntervalMs: 0,
        ...(location.tableName ? { tableName: location.tableName } : {}),
      });
    }
    case 'redis': {
      const client = new Redis(location.url, {
        lazyConnect: true,
        connectTimeout: connectTimeoutMs,
        maxRetriesPerRequest: 1,
        retryStrategy: () => null,
      });
      let lastError: Error | undefined;
      client.on('error', (error: Error) => {
        lastError = error;
      });
      try {
        await client.connect();
        await client.ping();
      } catch (error) {
        client.disconnect();
        throw new TollboothError(
          'ledger_unavailable',
          `Redis at ${redactLedgerUrl(location.url)} did not answer: ${(lastError ?? (error as Error)).message}`,
          { cause: error },
        );
      }
      const store = createRedisLedgerStore({
        redis: client,
        purgeIntervalMs: 0,
        ...(location.keyPrefix ? { keyPrefix: location.keyPrefix } : {}),
      });
      return closing(store, async () => {
        await client.quit().catch(() => client.disconnect());
      });
    }
    case 'postgres': {
      const pool = new pg.Pool({
        connectionString: location.connectionString,
        connectionTimeoutMillis: connectTimeoutMs,
        max: 2,
      });
      pool.on('error', () => {});
      try {
        await pool.query('SELECT 1');
      } catch (error) {
        await pool.end().catch(() => {});
        throw new TollboothError(
          'ledger_unavailable',
          `Postgres at ${redactLedgerUrl(location.connectionString)} did not answer: ${(error as Error).message}`,
          { cause: error },
        );
      }
      const store = createPostgresLedgerStore({
        pool,
        purgeIntervalMs: 0,
        ...(location.schema ? { schema: location.schema } : {}),
        ...(location.tableName ? { tableName: location.tableName } : {}),
      });
      return closing(store, () => pool.end().catch(() => {}));
    }
  }
}
