import { normalizeTarget } from './normalize-path';

/** A route path compiled for matching, with what orders routes by specificity. */
export interface Pattern {
  regex: RegExp;
  params: string[];
  literalLength: number;
  wildcards: number;
  /**
   * The regex source lower-cased: patterns that differ only in the case of their letters (the regex
   * ignores case) share it, so `GET /Docs` and `/docs` are routes at the same path.
   */
  pathKey: string;
  /** The normalised path of a route without params or wildcards (what its regex matches, ignoring case). */
  literal?: string;
}

/** A path segment that is a param: `:name`, the whole segment. */
export const PARAM_SEGMENT = /^:([A-Za-z_][A-Za-z0-9_]*)$/;

/**
 * A segment that reads as a param but is none, so it would only match its own text and leave the
 * resource free: `:` not followed by a name to the segment's end (`:id.json`), or the official
 * packages' `[name]` form.
 */
export const MISTAKEN_PARAM = /^(?::(?![A-Za-z_][A-Za-z0-9_]*$).*|\[[A-Za-z_][A-Za-z0-9_]*\])$/;

/** Paths whose case-insensitive regex match is exactly lower-case equality. */
export const ASCII_PATH = /^[\x20-\x7e]*$/;

/**
 * Compiles a declared path (`/tx/:txid`, `/api/v1/ai/*`) into a case-insensitive regex over the
 * normalised path; a trailing `/*` also matches the path without it (fail closed).
 */
export function compilePattern(path: string): Pattern {
  const normalized = normalizeTarget(path.replaceAll('*', '\u0000')).path.replaceAll('\u0000', '*');
  const params: string[] = [];
  let literalLength = 0;
  let wildcards = 0;
  let source = '';
  const segments = normalized.split('/').slice(1);
  segments.forEach((segment, index) => {
    // `/x/*` also matches `/x` itself: fail closed.
    if (segment === '*' && index === segments.length - 1) {
      source += '(?:/.*)?';
      wildcards++;
      return;
    }
    source += '/';
    const param = PARAM_SEGMENT.exec(segment);
    if (param) {
      params.push(param[1]!);
      source += '([^/]+)';
      return;
    }
    for (const part of segment.split(/(\*)/)) {
      if (part === '*') {
        wildcards++;
        source += '.*';
      } else {
        literalLength += part.length;
        source += part.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
      }
    }
  });
  const regex = new RegExp(`^${source || '/'}$`, 'i');
  const pattern: Pattern = { regex, pathKey: regex.source.toLowerCase(), params, literalLength, wildcards };
  if (params.length === 0 && wildcards === 0) pattern.literal = normalized;
  return pattern;
}
