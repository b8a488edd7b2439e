#!/usr/bin/env node
// tollbooth-devnet: runs dist/cli.js, or in a clone of the repository, where src/ exists (it is
// never packed), src/cli.ts with no build. See docs/packaging.md#commands.
import { existsSync } from 'node:fs';

const source = new URL('../src/cli.ts', import.meta.url);
if (existsSync(source)) (await import('../../../scripts/run-source-command.mjs')).runSourceCommand(source);
else await import('../dist/cli.js');
