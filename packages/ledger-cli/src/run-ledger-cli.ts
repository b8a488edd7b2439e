import { parseArgs } from 'node:util';
import { type LedgerEntry, type LedgerState, type LedgerStore, TollboothError } from '@tollbooth/core';
import {
  entryToJson,
  formatAccessLines,
  formatAccessTable,
  formatEntryDetail,
  formatEntryTable,
  formatStats,
} from './format-entries';
import { createLedgerInspector, LEDGER_STATES } from './ledger-inspector';
import { LEDGER_URL_FORMS, openLedgerStore } from './ledger-url';

/** Exit codes of `tollbooth-ledger`. */
export const LEDGER_CLI_EXIT = {
  ok: 0,
  /** `show`: no such entry; `uncertain --check`: uncertain entries exist. */
  notFound: 1,
  /** Bad arguments, bad ledger URL, missing SQLite file. */
  usage: 2,
  /** The ledger could not be read (server down, wrong schema, …). */
  unavailable: 3,
} as const;

/** Where the CLI writes and what it reads from the environment. */
export interface LedgerCliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env?: Record<string, string | undefined>;
}

/** Environment variable read when `--ledger` is not given. */
export const LEDGER_URL_ENV = 'TOLLBOOTH_LEDGER_URL';
/** Read after {@link LEDGER_URL_ENV}: the variable the fee service reads its ledger from. */
export const SERVICE_LEDGER_URL_ENV = 'LEDGER_URL';

export const LEDGER_CLI_USAGE = `Usage: tollbooth-ledger <command> [options]

Inspect a Tollbooth settlement ledger (read-only).

Commands:
  list                 entries, newest first
  uncertain            entries whose settlement outcome is unknown (retrying the exact
                       payload reconciles them)
  show <id>            one entry, every field (the id is the payment identity), and the
                       sign-in access it bought
  access               sign-in access grants, newest first, each with the payment that
                       bought it
  stats                number of entries in each state

Options:
  -l, --ledger <url>   the ledger (default: $${LEDGER_URL_ENV}, else $${SERVICE_LEDGER_URL_ENV})
      --state <state>  list: only this state (repeatable; ${LEDGER_STATES.join(', ')})
      --payer <addr>   list, access: only this payer (as stored, e.g. an EIP-55 address)
      --tx <hash>      list: only this settlement transaction
      --limit <n>      list, uncertain, access: at most n entries (default 100)
      --check          uncertain: exit 1 when there is any uncertain entry
      --json           JSON instead of a table (the signed payment payload left out)
      --with-payload   show, or with --json: include the signed payment payload (a bearer
                       credential: a replay of it gets the stored answer)
  -h, --help           this help

Ledger URLs:
  ${LEDGER_URL_FORMS.join('\n  ')}

Exit codes: 0 ok, 1 not found (show) or uncertain entries (uncertain --check),
2 bad arguments or ledger URL, 3 ledger unavailable.
`;

class UsageError extends Error {}

function parseLimit(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--limit must be a non-negative integer (got "${value}")`);
  return Number(value);
}

/**
 * Runs `tollbooth-ledger` with `argv` (without node and the script) and returns the exit code.
 * Never throws; errors go to `io.stderr`.
 *
 * @example
 * const code = await runLedgerCli(['uncertain', '--ledger', 'sqlite:./ledger.db'], {
 *   stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t),
 * });
 */
export async function runLedgerCli(argv: readonly string[], io: LedgerCliIo): Promise<number> {
  const env = io.env ?? process.env;
  const out = (text: string) => io.stdout(text.endsWith('\n') ? text : `${text}\n`);
  const err = (text: string) => io.stderr(text.endsWith('\n') ? text : `${text}\n`);
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    err(`tollbooth-ledger: ${(error as Error).message}\nRun tollbooth-ledger --help for usage.`);
    return LEDGER_CLI_EXIT.usage;
  }
  const { values, command, rest } = parsed;
  if (values.help || command === 'help') {
    out(LEDGER_CLI_USAGE);
    return LEDGER_CLI_EXIT.ok;
  }
  try {
    if (command === undefined)
      throw new UsageError('no command given (list, uncertain, show, access, stats)');
    if (!['list', 'uncertain', 'show', 'access', 'stats'].includes(command))
      throw new UsageError(`unknown command "${command}" (list, uncertain, show, access, stats)`);
    if (command === 'show' ? rest.length !== 1 : rest.length !== 0) {
      throw new UsageError(
        command === 'show' ? 'show takes exactly one entry id' : `unexpected argument "${rest[0]}"`,
      );
    }
    const filters = ['state', 'payer', 'tx'] as const;
    if (command !== 'list') {
      // `access` takes --payer too (the grants of one payer).
      const misplaced = filters.find(
        (f) => values[f] !== undefined && !(command === 'access' && f === 'payer'),
      );
      if (misplaced) throw new UsageError(`--${misplaced} only applies to list`);
    }
    if (values.check && command !== 'uncertain') throw new UsageError('--check only applies to uncertain');
    if (
      values['with-payload'] &&
      (command === 'stats' || command === 'access' || (command !== 'show' && !values.json))
    )
      throw new UsageError('--with-payload applies to show, and to list and uncertain with --json');
    if (values.limit !== undefined && (command === 'show' || command === 'stats'))
      throw new UsageError(`--limit does not apply to ${command}`);
    for (const state of values.state ?? []) {
      if (!LEDGER_STATES.includes(state as LedgerState))
        throw new UsageError(`unknown state "${state}" (one of ${LEDGER_STATES.join(', ')})`);
    }
  } catch (error) {
    err(`tollbooth-ledger: ${(error as Error).message}\nRun tollbooth-ledger --help for usage.`);
    return LEDGER_CLI_EXIT.usage;
  }
  const limit = parseLimitSafe(values.limit, err);
  if (limit === null) return LEDGER_CLI_EXIT.usage;
  const url = values.ledger ?? (env[LEDGER_URL_ENV] || env[SERVICE_LEDGER_URL_ENV]);
  if (!url) {
    err(
      `tollbooth-ledger: no ledger given: pass --ledger <url> or set ${LEDGER_URL_ENV} (or ${SERVICE_LEDGER_URL_ENV})`,
    );
    return LEDGER_CLI_EXIT.usage;
  }

  let store: LedgerStore;
  try {
    store = await openLedgerStore(url);
  } catch (error) {
    return fail(error, err);
  }
  try {
    const inspector = createLedgerInspector(store);
    const json = values.json === true;
    const output = { payload: values['with-payload'] === true };
    const toJson = (entry: LedgerEntry) => entryToJson(entry, output);
    switch (command) {
      case 'show': {
        const entry = await inspector.byId(rest[0]!);
        if (!entry) {
          err(`tollbooth-ledger: no entry with id ${rest[0]}`);
          return LEDGER_CLI_EXIT.notFound;
        }
        const grants = store.queryAccess ? await store.queryAccess({ payment: entry.id }) : [];
        const detail = { ...toJson(entry), ...(grants.length > 0 ? { access: grants } : {}) };
        out(
          json
            ? JSON.stringify(detail, null, 2)
            : `${formatEntryDetail(entry, output)}${formatAccessLines(grants)}`,
        );
        return LEDGER_CLI_EXIT.ok;
      }
      case 'access': {
        const grants = store.queryAccess
          ? await store.queryAccess({
              ...(values.payer === undefined ? {} : { payer: values.payer }),
              ...(limit === undefined ? {} : { limit }),
            })
          : [];
        out(json ? JSON.stringify(grants, null, 2) : formatAccessTable(grants));
        return LEDGER_CLI_EXIT.ok;
      }
      case 'stats': {
        const stats = await inspector.stats();
        out(json ? JSON.stringify(stats, null, 2) : formatStats(stats));
        return LEDGER_CLI_EXIT.ok;
      }
      case 'uncertain': {
        const entries = await inspector.uncertain(limit);
        out(json ? JSON.stringify(entries.map(toJson), null, 2) : formatEntryTable(entries));
        return values.check && entries.length > 0 ? LEDGER_CLI_EXIT.notFound : LEDGER_CLI_EXIT.ok;
      }
      default: {
        const states = values.state as LedgerState[] | undefined;
        const entries = await inspector.list({
          ...(states && states.length > 0 ? { state: states } : {}),
          ...(values.payer === undefined ? {} : { payer: values.payer }),
          ...(values.tx === undefined ? {} : { transaction: values.tx }),
          ...(limit === undefined ? {} : { limit }),
        });
        out(json ? JSON.stringify(entries.map(toJson), null, 2) : formatEntryTable(entries));
        return LEDGER_CLI_EXIT.ok;
      }
    }
  } catch (error) {
    return fail(error, err);
  } finally {
    await store.close().catch(() => {});
  }
}

function parse(argv: readonly string[]) {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      ledger: { type: 'string', short: 'l' },
      state: { type: 'string', multiple: true },
      payer: { type: 'string' },
      tx: { type: 'string' },
      limit: { type: 'string' },
      check: { type: 'boolean' },
      json: { type: 'boolean' },
      'with-payload': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, ...rest] = positionals;
  return { values, command, rest };
}

function parseLimitSafe(value: string | undefined, err: (text: string) => void): number | undefined | null {
  try {
    return parseLimit(value);
  } catch (error) {
    err(`tollbooth-ledger: ${(error as Error).message}`);
    return null;
  }
}

function fail(error: unknown, err: (text: string) => void): number {
  if (error instanceof TollboothError && error.code === 'invalid_config') {
    err(`tollbooth-ledger: ${error.message}`);
    return LEDGER_CLI_EXIT.usage;
  }
  err(`tollbooth-ledger: cannot read the ledger: ${(error as Error)?.message ?? String(error)}`);
  return LEDGER_CLI_EXIT.unavailable;
}
