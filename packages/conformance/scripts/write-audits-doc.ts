// Writes docs/audits.md and the facilitator table of docs/conformance.md from the audit lists
// (test/audits-doc.test.ts checks they stay in sync).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderAuditsMarkdown, withGeneratedTables } from '../src/audits-table';

const audits = fileURLToPath(new URL('../../../docs/audits.md', import.meta.url));
writeFileSync(audits, renderAuditsMarkdown());
console.log(`wrote ${audits}`);
const conformance = fileURLToPath(new URL('../../../docs/conformance.md', import.meta.url));
writeFileSync(conformance, withGeneratedTables(readFileSync(conformance, 'utf8')));
console.log(`wrote ${conformance}`);
