/** A request target split and normalised for route matching. */
export interface NormalizedTarget {
  /** `scheme://host` from an absolute URL, if any (lower-cased). */
  origin?: string;
  /** The path exactly as received (before the query), not decoded. */
  rawPath: string;
  /** The query string without `?`, exactly as received; `undefined` when there was no `?`. */
  query?: string;
  /**
   * The path decoded and normalised, case preserved: percent-decoding repeated until stable
   * (so `%2F`, `%5C` and double encoding cannot hide a segment), backslashes as slashes, empty
   * and `.` segments dropped, `..` resolved, no trailing slash. Always starts with `/`.
   */
  path: string;
}

const ABSOLUTE = /^\/*([a-zA-Z][a-zA-Z0-9+.-]*):\/\/([^/?#\\]*)/;
const PERCENT = /%([0-9a-fA-F]{2})/g;
/** `/` or `/seg/seg…` with no `%`, `\`, empty, `.` or `..` segment and no trailing slash. */
const PLAIN_PATH = /^(?:\/(?!\.{1,2}(?:\/|$))[^/%\\]+)+$|^\/$/;

/** Decodes every valid `%XX` as a byte and reads the bytes as UTF-8; invalid escapes stay as they are. */
function percentDecode(value: string): string {
  if (!value.includes('%')) return value;
  const bytes: number[] = [];
  let last = 0;
  for (const match of value.matchAll(PERCENT)) {
    const index = match.index;
    for (const byte of Buffer.from(value.slice(last, index), 'utf8')) bytes.push(byte);
    bytes.push(Number.parseInt(match[1] as string, 16));
    last = index + 3;
  }
  for (const byte of Buffer.from(value.slice(last), 'utf8')) bytes.push(byte);
  return Buffer.from(bytes).toString('utf8');
}

/**
 * Splits a request target (absolute URL, origin-form path, or absolute-form target inside an
 * absolute URL) and normalises its path so that encoding tricks reach the same route key.
 */
export function normalizeTarget(target: string): NormalizedTarget {
  let rest = target;
  let origin: string | undefined;
  // Strip scheme://authority, repeatedly: an adapter may prefix its origin to an absolute-form target.
  for (let match = ABSOLUTE.exec(rest); match; match = ABSOLUTE.exec(rest)) {
    origin ??= `${match[1]!.toLowerCase()}://${match[2]!.toLowerCase()}`;
    rest = rest.slice(match[0].length);
  }
  const hash = rest.indexOf('#');
  if (hash >= 0) rest = rest.slice(0, hash);
  const q = rest.indexOf('?');
  const rawPath = q >= 0 ? rest.slice(0, q) : rest;
  const query = q >= 0 ? rest.slice(q + 1) : undefined;

  // Most targets are already normal: one slash-led path of plain segments. Nothing to decode.
  if (PLAIN_PATH.test(rawPath)) {
    const result: NormalizedTarget = { rawPath, path: rawPath };
    if (origin !== undefined) result.origin = origin;
    if (query !== undefined) result.query = query;
    return result;
  }
  let decoded = rawPath;
  for (let i = 0; i < 4; i++) {
    const next = percentDecode(decoded);
    if (next === decoded) break;
    decoded = next;
  }
  const segments: string[] = [];
  for (const segment of decoded.replaceAll('\\', '/').split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      segments.pop();
      continue;
    }
    segments.push(segment);
  }
  const result: NormalizedTarget = { rawPath, path: `/${segments.join('/')}` };
  if (origin !== undefined) result.origin = origin;
  if (query !== undefined) result.query = query;
  return result;
}
