import type { LedgerStore } from '@tollbooth/core';
import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { openHistory } from '../capabilities/history/open';
import type { HistoryStore } from '../capabilities/history/types';
import type { ServiceConfig } from '../config';
import { ledgerKind, openLedger } from '../ledger';
import type { CleanupStack } from './cleanup';

/** How long start-up waits for each store to answer before refusing to start. */
export const STORE_CHECK_TIMEOUT_MS = 10_000;

/**
 * A store the configuration names could not be reached at start: one line per store, each naming
 * its variable. `npm start` prints it and exits as for a configuration error (exit 2).
 */
export class StoreUnavailableError extends Error {
  readonly code = 'store_unavailable';
  constructor(readonly problems: readonly string[]) {
    super(problems.join('\n'));
    this.name = 'StoreUnavailableError';
  }
}

export interface OpenedStores {
  ledger: LedgerStore;
  /** The rate limit's shared counters (`RATE_LIMIT_REDIS_URL`). */
  rateLimitRedis: Redis | undefined;
  /** The observatory's history, when the observatory runs. */
  history: HistoryStore | undefined;
}

/** With no upstream URL the embedded simulator serves every dialect: its data is made up. */
export function simulatedUpstreams(config: ServiceConfig): boolean {
  return !config.sources.mempool && !config.sources.esplora && !config.sources.core;
}

/**
 * Where the observatory keeps its history. The production profile never writes simulated data
 * into a configured database: on the embedded simulator its history stays in memory (a history of
 * made-up blocks in the production database would be scored beside, and judged against, the real
 * chain's once an upstream is set).
 */
export function historyUrlOf(config: ServiceConfig): string {
  return config.profile === 'production' && simulatedUpstreams(config)
    ? 'sqlite::memory:'
    : config.observatory.historyUrl;
}

/**
 * The observatory runs when it is enabled and an upstream gives per-block fee statistics
 * (mempool.space or Core, or the simulator serving both): see `capabilities/observatory/setup.ts`.
 */
function observatoryRuns(config: ServiceConfig): boolean {
  const { mempool, core } = config.sources;
  return config.observatory.enabled && (simulatedUpstreams(config) || !!mempool || !!core);
}

/** A URL for messages: the password masked, no query (it may carry one too). */
function shown(url: string): string {
  if (url.startsWith('sqlite:')) return url;
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  parsed.search = '';
  return parsed.toString();
}

const KIND_NAMES = { sqlite: 'SQLite', redis: 'Redis', postgres: 'PostgreSQL' } as const;

function messageOf(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return messageOf(error.errors[0]);
  const text = error instanceof Error ? error.message || (error as { code?: string }).code : undefined;
  return text ?? String(error);
}

/**
 * A Redis client that tells its connection failures once per outage: to the start-up check while
 * it runs (which then refuses to start), to the log afterwards — never ioredis' own
 * `[ioredis] Unhandled error event` on stderr at every reconnect.
 */
function redisClient(
  url: string,
  options: RedisOptions,
  logger: Logger,
  report: { what: string; code: string },
) {
  const client = new Redis(url, { ...options, lazyConnect: false });
  let failed: (error: Error) => void = () => {};
  const firstFailure = new Promise<Error>((resolve) => {
    failed = resolve;
  });
  let checking = true;
  let reported = false;
  client.on('error', (error: Error) => {
    if (checking) return failed(error);
    if (reported) return;
    reported = true;
    logger.warn({ err: error, code: report.code }, `${report.what} connection failed; reconnecting`);
  });
  client.on('ready', () => {
    reported = false;
  });
  return {
    client,
    firstFailure,
    checked: () => {
      checking = false;
    },
    close: async () => {
      // A client that never connected would queue QUIT until its retries run out.
      if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
      else client.disconnect();
    },
  };
}

/** Undefined once `ask` answers; else what went wrong (the first failure, or the timeout). */
async function problemOf(ask: () => Promise<unknown>, failure?: Promise<Error>): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(
      () => resolve(`no answer within ${STORE_CHECK_TIMEOUT_MS / 1000} s`),
      STORE_CHECK_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([
      ask().then(
        () => undefined,
        (error: unknown) => messageOf(error),
      ),
      ...(failure ? [failure.then(messageOf)] : []),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Step 0: the stores the configuration names — the settlement ledger (`LEDGER_URL`), the rate
 * limit's Redis (`RATE_LIMIT_REDIS_URL`) and the observatory's history (`HISTORY_URL`, by default
 * beside or in the ledger's database) — opened and each asked once, together, before anything else
 * starts. A store that cannot be reached stops the start with one line per store naming its
 * variable ({@link StoreUnavailableError}): a service listening without its ledger would refuse
 * every payment.
 */
export async function openStores(
  config: ServiceConfig,
  cleanups: CleanupStack,
  logger: Logger,
): Promise<OpenedStores> {
  const problems: string[] = [];
  const checks: Promise<void>[] = [];
  const check = (label: string, ask: () => Promise<unknown>, failure?: Promise<Error>) =>
    checks.push(
      problemOf(ask, failure).then((problem) => {
        if (problem) problems.push(`${label}: ${problem}`);
      }),
    );

  const ledgerUrl = config.ledgerUrl;
  const ledgerLabel = `LEDGER_URL: cannot open the ${KIND_NAMES[ledgerKind(ledgerUrl)]} ledger at ${shown(ledgerUrl)}`;
  const ledgerRedis = /^rediss?:\/\//.test(ledgerUrl)
    ? redisClient(ledgerUrl, {}, logger, { what: 'Redis ledger', code: 'ledger_unavailable' })
    : undefined;
  let ledger: LedgerStore | undefined;
  try {
    ledger = openLedger(ledgerUrl, {
      ...(ledgerRedis ? { redis: ledgerRedis.client } : {}),
      logger: { warn: (fields, message) => logger.warn(fields, message) },
    });
    const opened = ledger;
    cleanups.push('ledger', () => opened.close());
    check(ledgerLabel, () => opened.query({ limit: 1 }), ledgerRedis?.firstFailure);
  } catch (error) {
    problems.push(`${ledgerLabel}: ${messageOf(error)}`);
  }
  if (ledgerRedis) cleanups.push('ledger redis', ledgerRedis.close);

  const rateLimit = config.rateLimit.redisUrl
    ? redisClient(config.rateLimit.redisUrl, { maxRetriesPerRequest: 2 }, logger, {
        what: 'rate-limit Redis',
        code: 'rate_limit_store_unavailable',
      })
    : undefined;
  if (rateLimit) {
    cleanups.push('rate-limit redis', rateLimit.close);
    check(
      `RATE_LIMIT_REDIS_URL: cannot reach the rate limit's Redis at ${shown(config.rateLimit.redisUrl!)}`,
      () => rateLimit.client.ping(),
      rateLimit.firstFailure,
    );
  }

  let history: HistoryStore | undefined;
  const historyUrl = historyUrlOf(config);
  if (historyUrl !== config.observatory.historyUrl && observatoryRuns(config)) {
    logger.warn(
      { code: 'simulated_upstream' },
      `PROFILE=production with no MEMPOOL_URL, ESPLORA_URL or CORE_RPC_URL: every fee answer is the embedded simulator's, and its made-up observatory history is kept in memory, never in ${config.observatory.historyFrom}'s database`,
    );
  }
  const sharesLedger = historyUrl === ledgerUrl;
  if (observatoryRuns(config)) {
    const label =
      config.observatory.historyFrom === 'HISTORY_URL'
        ? `HISTORY_URL: cannot open the observatory history at ${shown(historyUrl)}`
        : `LEDGER_URL: cannot open the observatory history kept ${sharesLedger ? 'in' : 'beside'} the ledger at ${shown(historyUrl)} (HISTORY_URL puts it elsewhere)`;
    try {
      const opened = openHistory(historyUrl);
      history = opened;
      cleanups.push('observatory history', () => opened.close());
      check(label, () => opened.migrate());
    } catch (error) {
      problems.push(`${label}: ${messageOf(error)}`);
    }
  }

  await Promise.all(checks);
  ledgerRedis?.checked();
  rateLimit?.checked();
  // A history in the ledger's own database that cannot be reached is the ledger's line already.
  const reported =
    sharesLedger && problems.some((p) => p.startsWith(ledgerLabel))
      ? problems.filter((p) => !p.includes('observatory history kept in the ledger'))
      : problems;
  if (reported.length > 0) throw new StoreUnavailableError(reported.sort());
  return { ledger: ledger!, rateLimitRedis: rateLimit?.client, history };
}
