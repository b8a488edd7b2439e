import { check } from '../audit-failure';
import { sendRaw } from '../http';
import type { AuditContext } from '../types';
import { checkNotRun, defineAudit } from './helpers';

/** Replaces the last `/` of a path (or the only one) with `sep`. */
function splitWith(path: string, sep: string): string {
  const at = path.lastIndexOf('/');
  return at > 0 ? `${path.slice(0, at)}${sep}${path.slice(at + 1)}` : `/${sep}${path.slice(1)}`;
}

function lastSegmentAt(path: string): number {
  return path.lastIndexOf('/') + 1;
}

/** Fails when a variant of the paid path reaches the handler or answers 2xx or 5xx. */
async function checkGated(ctx: AuditContext, targets: string[]): Promise<void> {
  for (const target of targets) {
    const answer = await sendRaw(ctx, target);
    check(
      answer.status >= 300 && answer.status < 500,
      `GET ${target} answered ${answer.status} without payment (expected 402 or another refusal)`,
    );
  }
  checkNotRun(ctx);
}

const variant = (id: string, what: string, make: (path: string, ctx: AuditContext) => string[]) =>
  defineAudit({
    id,
    level: 'MUST',
    profile: 'tollbooth',
    sentence: `MUST NOT serve a paid route unpaid through ${what}`,
    needs: 'server',
    run: (ctx) => checkGated(ctx, make(ctx.paths.paid, ctx)),
  });

export const pathAudits = [
  variant('APATH-01', 'a case-changed path', (p) => [
    p.toUpperCase(),
    p.slice(0, -1) + p.slice(-1).toUpperCase(),
  ]),
  variant('APATH-02', 'a percent-encoded slash (%2F)', (p) => [splitWith(p, '%2F'), splitWith(p, '%2f')]),
  variant('APATH-03', 'a backslash, raw or encoded (%5C)', (p) => [splitWith(p, '%5C'), splitWith(p, '\\')]),
  variant('APATH-04', 'doubled slashes', (p) => [p.replaceAll('/', '//'), `/${p}`]),
  variant('APATH-05', 'a trailing slash', (p) => [`${p}/`, `${p}//`]),
  variant('APATH-06', 'dot segments', (p) => {
    const at = lastSegmentAt(p);
    return [`${p.slice(0, at)}./${p.slice(at)}`, `${p.slice(0, at)}audit/../${p.slice(at)}`];
  }),
  variant('APATH-07', 'percent-encoded letters or double encoding', (p) => {
    const at = lastSegmentAt(p);
    const letter = `%${p.charCodeAt(at).toString(16).toUpperCase()}`;
    return [`${p.slice(0, at)}${letter}${p.slice(at + 1)}`, splitWith(p, '%252F')];
  }),
  variant('APATH-08', 'an absolute-form request target', (p, ctx) => [
    `http://evil.example${p}`,
    `${new URL(ctx.baseUrl).origin}${p}`,
  ]),
];
