import { randomUUID } from 'node:crypto';
import { TollboothConfigError } from '../errors/config-error';
import type { FacilitatorClient } from '../facilitator/types';
import { createMemoryLedgerStore } from '../ledger/memory/index';
import type { LedgerStore } from '../ledger/types';
import {
  type BrowserPaywall,
  checkPaywallOptions,
  createBrowserPaywall,
} from '../paywall/create-browser-paywall';
import { compileRoutes, type RouteTable } from '../routes/compile-routes';
import type { RoutesConfig } from '../routes/types';
import type { SchemeServer } from '../scheme';
import { type GateLogger, PAYMENT_GATE_DEFAULTS, type PaymentGateOptions } from './options';
import type { GateHooks } from './types';

/** The numeric settings, each an option or its default. */
export type GateSettings = { -readonly [K in keyof typeof PAYMENT_GATE_DEFAULTS]: number };

/** The gate's options, parsed once: every default filled in, the routes compiled. */
export interface GateConfig {
  settings: GateSettings;
  table: RouteTable;
  schemes: readonly SchemeServer[];
  facilitator: FacilitatorClient;
  store: LedgerStore;
  instanceId: string;
  hooks: GateHooks;
  logger: GateLogger | undefined;
  now: () => number;
  otherMethods: 'method-not-allowed' | 'pass';
  paywall: BrowserPaywall | undefined;
}

/**
 * Parses the options into the gate's configuration, or throws one `invalid_config` listing every
 * problem. Networks whose scheme has no chain reader are warned about once, here.
 */
export function parseGateOptions(options: PaymentGateOptions): GateConfig {
  if (!options || typeof options !== 'object')
    throw new TollboothConfigError('payment gate options', ['options are required']);
  const problems = checkGateOptions(options);
  const settings: GateSettings = { ...PAYMENT_GATE_DEFAULTS };
  for (const key of Object.keys(PAYMENT_GATE_DEFAULTS) as Array<keyof GateSettings>) {
    const value = options[key];
    if (value === undefined) continue;
    if (!Number.isFinite(value) || value < 0) problems.push(`${key} must be a non-negative number`);
    else settings[key] = value;
  }
  const table = compileGateRoutes(options, problems);
  // Without a scheme list (refused above) there is no reader to look for.
  const readers = table && Array.isArray(options.schemes) ? chainReaderProblems(table, options.schemes) : [];
  if (options.requireChainReader) {
    for (const reader of readers)
      problems.push(`requireChainReader: ${reader}, so uncertain settlements could not be resolved`);
  }
  if (problems.length > 0 || !table) throw new TollboothConfigError('payment gate options', problems);
  const logger = options.logger;
  for (const problem of readers) {
    logger?.warn(
      { code: 'no_chain_reader' },
      `${problem}: a settlement whose answer is lost stays uncertain (502) until the payer's retry finds it settled or expired`,
    );
  }
  return {
    settings,
    table,
    schemes: options.schemes,
    facilitator: options.facilitator,
    store: options.ledger ?? createMemoryLedgerStore(),
    instanceId: options.instanceId ?? randomUUID().slice(0, 8),
    hooks: options.hooks ?? {},
    logger,
    now: options.now ?? Date.now,
    otherMethods: options.otherMethods ?? 'method-not-allowed',
    paywall: options.paywall ? createBrowserPaywall(options.paywall) : undefined,
  };
}

/** The gate's own option problems (the routes are checked by `compileRoutes`). */
function checkGateOptions(options: PaymentGateOptions): string[] {
  const problems: string[] = [];
  const facilitator = options.facilitator as Partial<FacilitatorClient> | undefined;
  if (!facilitator) problems.push('facilitator is required (e.g. createHttpFacilitatorClient({ url }))');
  else if (typeof facilitator.verify !== 'function' || typeof facilitator.settle !== 'function') {
    problems.push('facilitator must have verify and settle methods (a FacilitatorClient)');
  }
  const routes = options.routes as RouteTable | undefined;
  if (
    typeof routes?.match === 'function' &&
    (!Array.isArray(options.schemes) || options.schemes.length === 0)
  ) {
    problems.push('schemes needs at least one scheme server (e.g. createExactEvmScheme())');
  }
  if (options.routes === undefined || options.routes === null) problems.push('routes is required');
  problems.push(...checkPaywallOptions(options.paywall));
  return problems;
}

/** The gate's route table; a routes config is compiled here, its problems added to the gate's. */
function compileGateRoutes(options: PaymentGateOptions, problems: string[]): RouteTable | undefined {
  if (typeof (options.routes as RouteTable | undefined)?.match === 'function')
    return options.routes as RouteTable;
  if (options.routes === undefined || options.routes === null) return undefined;
  try {
    return compileRoutes(options.routes as RoutesConfig, {
      schemes: options.schemes,
      ...(options.baseUrl === undefined ? {} : { baseUrl: options.baseUrl }),
    });
  } catch (error) {
    if (!(error instanceof TollboothConfigError)) throw error;
    problems.push(...error.problems);
    return undefined;
  }
}

/**
 * The networks of paid routes whose scheme has no chain reader (`reconcile`): there, an uncertain
 * settlement can only be resolved by the payer's retry finding it, never by the chain.
 */
function chainReaderProblems(table: RouteTable, schemes: readonly SchemeServer[]): string[] {
  const problems = new Set<string>();
  for (const route of table.routes) {
    for (const requirement of route.requirements) {
      const scheme = schemeFor(schemes, requirement);
      if (scheme && (!scheme.reconcile || scheme.hasChainReader?.(requirement.network) === false))
        problems.add(`${requirement.network} (scheme ${requirement.scheme}) has no chain reader`);
    }
  }
  return [...problems];
}

/** The scheme server that takes payments of a requirement's scheme on its network. */
export function schemeFor(
  schemes: readonly SchemeServer[],
  requirement: { scheme: string; network: string },
): SchemeServer | undefined {
  return schemes.find((s) => s.scheme === requirement.scheme && s.supportsNetwork(requirement.network));
}
