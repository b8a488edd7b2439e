#!/usr/bin/env node
// tollbooth-facilitator-fault-proxy: runs dist/fault-proxy-cli.js, or in a clone of the repository, where src/ exists (it is
// never packed), src/fault-proxy-cli.ts with no build. See docs/packaging.md#commands.
import { existsSync } from 'node:fs';

const source = new URL('../src/fault-proxy-cli.ts', import.meta.url);
if (existsSync(source)) (await import('../../../scripts/run-source-command.mjs')).runSourceCommand(source);
else await import('../dist/fault-proxy-cli.js');
