// The official x402 TypeScript releases the interop suite runs against, side by side: the newest
// the registry serves and the oldest Tollbooth supports, installed under npm aliases
// (`@x402-oldest/*`, see the root package.json; its `overrides` pin each old package's own
// @x402/core and @x402/extensions to the same release, as a lockfile of that time would).
// Raising the floor is a change of the alias versions and nothing else.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as newestAxios from '@x402/axios';
import * as newestCoreFacilitator from '@x402/core/facilitator';
import * as newestCoreServer from '@x402/core/server';
import * as newestEvm from '@x402/evm';
import * as newestEvmClient from '@x402/evm/exact/client';
import * as newestEvmFacilitator from '@x402/evm/exact/facilitator';
import * as newestEvmServer from '@x402/evm/exact/server';
import * as newestEvmClientV1 from '@x402/evm/exact/v1/client';
import * as newestExpress from '@x402/express';
import * as newestFetch from '@x402/fetch';
import * as newestHono from '@x402/hono';
import * as oldestAxios from '@x402-oldest/axios';
import * as oldestCoreFacilitator from '@x402-oldest/core/facilitator';
import * as oldestCoreServer from '@x402-oldest/core/server';
import * as oldestEvm from '@x402-oldest/evm';
import * as oldestEvmClient from '@x402-oldest/evm/exact/client';
import * as oldestEvmFacilitator from '@x402-oldest/evm/exact/facilitator';
import * as oldestEvmServer from '@x402-oldest/evm/exact/server';
import * as oldestEvmClientV1 from '@x402-oldest/evm/exact/v1/client';
import * as oldestExpress from '@x402-oldest/express';
import * as oldestFetch from '@x402-oldest/fetch';
import * as oldestHono from '@x402-oldest/hono';

/**
 * The modules of one release a test uses, typed as the newest release's. The older release is
 * cast to it: its classes have private members, which makes them nominally different types to
 * TypeScript even where the API is the same; the tests judge whether it behaves the same.
 */
export interface OfficialRelease {
  /** `newest` or `oldest`. */
  name: string;
  /** Installed version of each package under its real name, e.g. `{'@x402/core': '2.27.0'}`. */
  versions: Record<string, string>;
  coreServer: Pick<typeof newestCoreServer, 'HTTPFacilitatorClient' | 'x402ResourceServer'>;
  coreFacilitator: Pick<typeof newestCoreFacilitator, 'x402Facilitator'>;
  evm: Pick<typeof newestEvm, 'toFacilitatorEvmSigner'>;
  evmClient: Pick<typeof newestEvmClient, 'ExactEvmScheme'>;
  /** The client scheme for x402 v1 routes (`x402Client.registerV1`). */
  evmClientV1: Pick<typeof newestEvmClientV1, 'ExactEvmSchemeV1'>;
  evmServer: Pick<typeof newestEvmServer, 'ExactEvmScheme'>;
  evmFacilitator: Pick<typeof newestEvmFacilitator, 'ExactEvmScheme'>;
  fetch: Pick<typeof newestFetch, 'wrapFetchWithPayment' | 'x402Client' | 'decodePaymentResponseHeader'>;
  axios: Pick<typeof newestAxios, 'wrapAxiosWithPayment' | 'x402Client' | 'decodePaymentResponseHeader'>;
  express: Pick<typeof newestExpress, 'paymentMiddleware'>;
  hono: Pick<typeof newestHono, 'paymentMiddleware'>;
}

const PACKAGES = ['core', 'evm', 'fetch', 'axios', 'express', 'hono'] as const;

/** Versions as installed: `@x402/<name>` for the newest, the `@x402-oldest/<name>` alias for the oldest. */
function installedVersions(scope: '@x402' | '@x402-oldest'): Record<string, string> {
  const root = join(import.meta.dirname, '..', '..', 'node_modules');
  return Object.fromEntries(
    PACKAGES.map((name) => {
      const manifest = JSON.parse(readFileSync(join(root, scope, name, 'package.json'), 'utf8'));
      return [`@x402/${name}`, manifest.version as string];
    }),
  );
}

export const NEWEST: OfficialRelease = {
  name: 'newest',
  versions: installedVersions('@x402'),
  coreServer: newestCoreServer,
  coreFacilitator: newestCoreFacilitator,
  evm: newestEvm,
  evmClient: newestEvmClient,
  evmClientV1: newestEvmClientV1,
  evmServer: newestEvmServer,
  evmFacilitator: newestEvmFacilitator,
  fetch: newestFetch,
  axios: newestAxios,
  express: newestExpress,
  hono: newestHono,
};

export const OLDEST = {
  name: 'oldest',
  versions: installedVersions('@x402-oldest'),
  coreServer: oldestCoreServer,
  coreFacilitator: oldestCoreFacilitator,
  evm: oldestEvm,
  evmClient: oldestEvmClient,
  evmClientV1: oldestEvmClientV1,
  evmServer: oldestEvmServer,
  evmFacilitator: oldestEvmFacilitator,
  fetch: oldestFetch,
  axios: oldestAxios,
  express: oldestExpress,
  hono: oldestHono,
} as unknown as OfficialRelease;

export const OFFICIAL_RELEASES: readonly OfficialRelease[] = [NEWEST, OLDEST];

/** `@x402/core 2.27.0, …` for a test title. */
export function describeRelease(release: OfficialRelease): string {
  return `${release.name} official release (${Object.entries(release.versions)
    .map(([name, version]) => `${name.replace('@x402/', '')} ${version}`)
    .join(', ')})`;
}
