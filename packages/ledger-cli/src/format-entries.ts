import type { LedgerEntry } from '@tollbooth/core';
import { LEDGER_STATES, type LedgerStats } from './ledger-inspector';

/** A ledger entry as plain JSON: times stay epoch ms, the response body is base64 (plus text when UTF-8). */
export type LedgerEntryJson = Omit<LedgerEntry, 'response'> & {
  response?: { status: number; headers: Record<string, string>; bodyBase64: string; bodyText?: string };
};

const utf8 = new TextDecoder('utf-8', { fatal: true });

function textOf(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** Converts an entry to JSON-safe data (see {@link LedgerEntryJson}). */
export function entryToJson(entry: LedgerEntry): LedgerEntryJson {
  const { response, ...rest } = entry;
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

/** The default output of `show`: every field of one entry. */
export function formatEntryDetail(entry: LedgerEntry): string {
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
