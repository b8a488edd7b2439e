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
import { compileRoutes } from '../routes/compile-routes';
import type { RoutesConfig, RouteTable } from '../routes/types';
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
  replay: 'stored-answer' | 'strict';
  /** Ask `/verify` before `/settle` on every paid route, never settling unverified nor verifying locally (`verifyBeforeSettle`). */
  verifyBeforeSettle: boolean;
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
  if (table && options.ledger && table.routes.some((route) => route.signIn)) {
    const missing = ACCESS_METHODS.filter((name) => typeof options.ledger?.[name] !== 'function');
    if (missing.length > 0)
      problems.push(
        `ledger: a sign-in route needs a store with access grants (missing ${missing.join(', ')})`,
      );
  }
  const unreserved =
    table && Array.isArray(options.schemes) ? reservationProblems(table, options, problems) : [];
  if (problems.length > 0 || !table) throw new TollboothConfigError('payment gate options', problems);
  const logger = options.logger;
  for (const route of unreserved) {
    logger?.warn(
      { code: 'no_balance_reader' },
      `${route}: reserveBalance asks for the payer's balance, and no chain reader reads it there — the route runs its handler unreserved (docs/ledger.md#one-balance-one-side-effect)`,
    );
  }
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
    replay: options.replay ?? 'stored-answer',
    verifyBeforeSettle: options.verifyBeforeSettle === true,
    paywall: options.paywall ? createBrowserPaywall(options.paywall) : undefined,
  };
}

const ACCESS_METHODS = ['grantAccess', 'useAccess', 'returnAccess', 'claimNonce'] as const;

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
  if (options.replay !== undefined && options.replay !== 'stored-answer' && options.replay !== 'strict')
    problems.push(`replay must be 'stored-answer' or 'strict', not ${JSON.stringify(options.replay)}`);
  if (options.verifyBeforeSettle !== undefined && typeof options.verifyBeforeSettle !== 'boolean')
    problems.push('verifyBeforeSettle must be true or false');
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
      ...(options.signIn === undefined
        ? {}
        : {
            signIn:
              typeof options.signIn === 'object' && options.signIn !== null
                ? { ...options.signIn, now: options.signIn.now ?? options.now ?? Date.now }
                : options.signIn,
          }),
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

/**
 * Routes that reserve the payer's balance: a store without reservations is a problem; the routes
 * (and networks) whose scheme cannot read a balance are returned, to be warned about.
 */
function reservationProblems(table: RouteTable, options: PaymentGateOptions, problems: string[]): string[] {
  const routes = table.routes.filter((route) => route.config.reserveBalance === true);
  const store = options.ledger;
  if (
    routes.length > 0 &&
    store &&
    (typeof store.reserveBalance !== 'function' || typeof store.releaseReservation !== 'function')
  )
    problems.push(
      `ledger: ${routes[0]!.key} reserves the payer's balance (reserveBalance), and this store has no reserveBalance/releaseReservation`,
    );
  const unreserved = new Set<string>();
  for (const route of routes) {
    for (const requirement of route.requirements) {
      const scheme = schemeFor(options.schemes, requirement);
      if (scheme && !canReserve(scheme, requirement.network))
        unreserved.add(`${route.key} on ${requirement.network}`);
    }
  }
  return [...unreserved];
}

/** The scheme server that takes payments of a requirement's scheme on its network. */
export function schemeFor(
  schemes: readonly SchemeServer[],
  requirement: { scheme: string; network: string },
): SchemeServer | undefined {
  return schemes.find((s) => s.scheme === requirement.scheme && s.supportsNetwork(requirement.network));
}

/** Whether a scheme can hold a payer's balance on a network: it reads balances, and has a chain reader there. */
export function canReserve(scheme: SchemeServer, network: string): boolean {
  return typeof scheme.balanceOf === 'function' && scheme.hasChainReader?.(network) !== false;
}
