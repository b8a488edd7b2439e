// Writes docs/audits.md from the audit list (test/audits-doc.test.ts checks it stays in sync).
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderAuditsMarkdown } from '../src/audits-table';

const target = fileURLToPath(new URL('../../../docs/audits.md', import.meta.url));
writeFileSync(target, renderAuditsMarkdown());
console.log(`wrote ${target}`);
