// JUnit XML for CI systems: one testsuite per section, one testcase per audit. A broken rule is a
// <failure> (its type is the RFC 2119 level), an audit that could not be judged an <error>, one
// that does not apply <skipped/>.
import type { AuditResult } from '../results';

export interface JunitSuite {
  name: string;
  results: readonly AuditResult[];
}

/** Whether XML 1.0 allows a character (most control characters it does not). */
const allowedInXml = (char: string) => {
  const code = char.charCodeAt(0);
  return code >= 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
};

/** Escapes text for an attribute or element, dropping what XML cannot hold (targets send anything). */
const escapeXml = (text: string) =>
  [...text]
    .filter(allowedInXml)
    .join('')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');

const seconds = (results: readonly AuditResult[]) =>
  (results.reduce((sum, r) => sum + (r.ms ?? 0), 0) / 1000).toFixed(3);

function testcase(classname: string, result: AuditResult): string {
  const open = `    <testcase classname="${escapeXml(classname)}" name="${escapeXml(`${result.id} ${result.sentence}`)}" time="${((result.ms ?? 0) / 1000).toFixed(3)}"`;
  const message = escapeXml(result.message ?? '');
  switch (result.status) {
    case 'passed':
      return `${open}/>`;
    case 'failed':
      return `${open}>\n      <failure type="${result.level}" message="${message}">${message}</failure>\n    </testcase>`;
    case 'skipped':
      return `${open}>\n      <skipped message="${message}"/>\n    </testcase>`;
    default:
      return `${open}>\n      <error type="${result.status}" message="${message}">${message}</error>\n    </testcase>`;
  }
}

/** Renders the run as a JUnit XML document. */
export function renderJunit(name: string, suites: readonly JunitSuite[]): string {
  const all = suites.flatMap((s) => s.results);
  const count = (results: readonly AuditResult[], status: AuditResult['status'] | 'error') =>
    results.filter((r) =>
      status === 'error' ? r.status === 'error' || r.status === 'rate_limited' : r.status === status,
    ).length;
  const attributes = (results: readonly AuditResult[]) =>
    `tests="${results.length}" failures="${count(results, 'failed')}" errors="${count(results, 'error')}" skipped="${count(results, 'skipped')}" time="${seconds(results)}"`;
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="${escapeXml(name)}" ${attributes(all)}>`,
  ];
  for (const suite of suites) {
    lines.push(`  <testsuite name="${escapeXml(suite.name)}" ${attributes(suite.results)}>`);
    for (const result of suite.results) lines.push(testcase(`${name}.${suite.name}`, result));
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>', '');
  return lines.join('\n');
}
