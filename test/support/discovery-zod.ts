// The zod that discovery reads schemas with. The root workspace resolves `zod` to 3.25 (pulled
// in by the official x402 packages), whose zod-4 API keeps its metadata (descriptions, examples)
// in a registry of its own; Tollbooth's packages depend on zod 4. Tests under test/ therefore
// load zod 4 from beside @tollbooth/core. Code that lives in a workspace (the fee service)
// simply writes `import * as z from 'zod'`.
import { createRequire } from 'node:module';
import type * as Zod from 'zod/v4';

const requireFromCore = createRequire(new URL('../../packages/core/package.json', import.meta.url));

export const z: typeof Zod = requireFromCore('zod');
