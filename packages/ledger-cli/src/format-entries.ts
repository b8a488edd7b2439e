import type { AccessGrant, LedgerEntry } from '@tollbooth/core';
import { LEDGER_STATES, type LedgerStats } from './ledger-inspector';

/**
 * A ledger entry as plain JSON: times stay epoch ms, the response body is base64 (plus text when
 * UTF-8). The signed payment payload is left out unless asked for: whoever holds it can replay it
 * for the stored answer (a bearer credential).
 */
export type LedgerEntryJson = Omit<LedgerEntry, 'response' | 'payload'> & {
  payload?: unknown;
  response?: { status: number; headers: Record<string, string>; bodyBase64: string; bodyText?: string };
};

/** What an entry's output includes beyond the default. */
export interface EntryOutputOptions {
  /** The signed payment payload (`--with-payload`). Default false. */
  payload?: boolean;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function textOf(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** Converts an entry to JSON-safe data (see {@link LedgerEntryJson}). */
export function entryToJson(entry: LedgerEntry, options: EntryOutputOptions = {}): LedgerEntryJson {
  const { response, payload, ...fields } = entry;
  const rest: LedgerEntryJson = options.payload ? { ...fields, payload } : fields;
  if (!response) return rest;
  const body = response.body;
  const text = textOf(body);
  return {
    ...rest,
    response: {
      status: response.status,
      headers: response.headers,
      bodyBase64: Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('base64'),
      ...(text === undefined ? {} : { bodyText: text }),
    },
  };
}

function iso(ms: number): string {
  return Number.isFinite(ms) ? new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z') : String(ms);
}

function short(value: string | undefined, keep = 10): string {
  if (!value) return '-';
  return value.length <= keep * 2 + 1 ? value : `${value.slice(0, keep)}…${value.slice(-6)}`;
}

/** Lays rows out in left-aligned columns separated by two spaces. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** The default output of `list` and `uncertain`: one line per entry. */
export function formatEntryTable(entries: readonly LedgerEntry[]): string {
  if (entries.length === 0) return 'no entries';
  const rows = entries.map((e) => [
    iso(e.createdAt),
    e.state,
    e.route,
    e.payer ?? '-',
    short(e.transaction),
    e.error?.code ?? '-',
    e.resolution ? `${e.resolution.action} (${e.resolution.by})` : '-',
    e.id,
  ]);
  const table = formatTable(
    ['CREATED', 'STATE', 'ROUTE', 'PAYER', 'TRANSACTION', 'ERROR', 'RESOLVED', 'ID'],
    rows,
  );
  return `${table}\n${entries.length} ${entries.length === 1 ? 'entry' : 'entries'}`;
}

const MAX_BODY_CHARS = 2_000;

/** What resolved an entry (the reconciler or a retry), in one line. */
function resolutionLine(entry: LedgerEntry): string {
  const r = entry.resolution;
  if (!r) return '-';
  const attempts = r.attempts > 0 ? `, ${r.attempts} ${r.attempts === 1 ? 'look' : 'looks'}` : '';
  const note = r.note ? `: ${r.note}` : '';
  return `${r.action} by the ${r.by} on ${r.instance} at ${iso(r.at)} (was ${r.from}${attempts})${note}`;
}

/** The default output of `show`: every field of one entry (the signed payload only when asked for). */
export function formatEntryDetail(entry: LedgerEntry, options: EntryOutputOptions = {}): string {
  const lines: Array<[string, string]> = [
    ['id', entry.id],
    ['state', entry.state],
    ['route', entry.route],
    ['resource', entry.resource],
    ['network', entry.network],
    ['payer', entry.payer ?? '-'],
    ['transaction', entry.transaction ?? '-'],
    ['error', entry.error ? `${entry.error.code}: ${entry.error.message}` : '-'],
    ['resolved', resolutionLine(entry)],
    ['owner', entry.owner],
    ['created', iso(entry.createdAt)],
    ['updated', iso(entry.updatedAt)],
    ['lease until', iso(entry.leaseUntil)],
    ['valid before', iso(entry.validBefore * 1000)],
    ['expires', iso(entry.expiresAt)],
  ];
  const width = Math.max(...lines.map(([k]) => k.length));
  const out = lines.map(([k, v]) => `${k.padEnd(width)}  ${v}`);
  if (entry.receipt !== undefined) out.push('', 'receipt:', JSON.stringify(entry.receipt, null, 2));
  if (options.payload)
    out.push(
      '',
      'payload (signed; a replay of it gets the stored answer):',
      JSON.stringify(entry.payload, null, 2),
    );
  if (entry.response) {
    const { status, headers, body } = entry.response;
    out.push('', `response: ${status}, ${body.byteLength} bytes`);
    for (const [name, value] of Object.entries(headers)) out.push(`  ${name}: ${value}`);
    const text = textOf(body);
    if (text === undefined) out.push('  (binary body)');
    else out.push(text.length > MAX_BODY_CHARS ? `${text.slice(0, MAX_BODY_CHARS)}… (truncated)` : text);
  }
  return out.join('\n');
}

/** The default output of `stats`. */
export function formatStats(stats: LedgerStats): string {
  return formatTable(
    ['STATE', 'COUNT'],
    [...LEDGER_STATES.map((s) => [s, String(stats[s])]), ['total', String(stats.total)]],
  );
}

/** How much of a grant is left: uses taken of those bought, and when its pass ends. */
function grantTerms(grant: AccessGrant): string {
  const uses = grant.uses === undefined ? `${grant.used} used` : `${grant.used}/${grant.uses} used`;
  return grant.validUntil === undefined ? uses : `${uses}, pass until ${iso(grant.validUntil)}`;
}

/** The lines `show` adds under a payment: the sign-in access it bought (docs/sign-in-with-x.md). */
export function formatAccessLines(grants: readonly AccessGrant[]): string {
  if (grants.length === 0) return '';
  const lines = ['', 'sign-in access bought:'];
  for (const grant of grants) {
    lines.push(`  ${grant.route} on ${grant.network} for ${grant.payer}: ${grantTerms(grant)}`);
    const last = grant.lastUsedAt === undefined ? '' : `, last used ${iso(grant.lastUsedAt)}`;
    lines.push(`  granted ${iso(grant.grantedAt)}${last}`);
  }
  return lines.join('\n');
}

/** The default output of `access`: one line per grant, beside the payment that bought it. */
export function formatAccessTable(grants: readonly AccessGrant[]): string {
  if (grants.length === 0) return 'no access grants';
  const rows = grants.map((g) => [
    iso(g.grantedAt),
    g.route,
    g.payer,
    grantTerms(g),
    short(g.transaction),
    g.payment,
  ]);
  const table = formatTable(['GRANTED', 'ROUTE', 'PAYER', 'ACCESS', 'TRANSACTION', 'PAYMENT'], rows);
  return `${table}\n${grants.length} ${grants.length === 1 ? 'grant' : 'grants'}`;
}
