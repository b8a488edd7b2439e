import { describe, expect, it, vi } from 'vitest';
import { TollboothConfigError } from '../errors/config-error';
import { createMemoryLedgerStore } from '../ledger/memory/index';
import { compileRoutes } from '../routes/compile-routes';
import type { SchemeServer } from '../scheme';
import { createScriptedFacilitator } from '../test-support/scripted-facilitator';
import { createSimpleScheme, TEST_PAY_TO } from '../test-support/simple-scheme';
import { parseGateOptions, schemeFor } from './config';
import { PAYMENT_GATE_DEFAULTS, type PaymentGateOptions } from './options';

const accepts = { network: 'eip155:8453', payTo: TEST_PAY_TO, price: '$0.001' };

function options(overrides: Partial<PaymentGateOptions> = {}): PaymentGateOptions {
  return {
    routes: { 'GET /paid': { accepts } },
    schemes: [createSimpleScheme()],
    facilitator: createScriptedFacilitator(),
    ...overrides,
  };
}

function problemsOf(parse: () => unknown): readonly string[] {
  try {
    parse();
  } catch (error) {
    expect(error).toBeInstanceOf(TollboothConfigError);
    return (error as TollboothConfigError).problems;
  }
  throw new Error('expected a configuration error');
}

/** A scheme whose chain reader does not serve any network. */
function withoutChainReader(): SchemeServer {
  return { ...createSimpleScheme(), hasChainReader: () => false };
}

describe('parseGateOptions', () => {
  it('fills in every default the options leave out', () => {
    const config = parseGateOptions(options());
    expect(config.settings).toEqual(PAYMENT_GATE_DEFAULTS);
    expect(config.otherMethods).toBe('method-not-allowed');
    expect(config.paywall).toBeUndefined();
    expect(config.hooks).toEqual({});
    expect(config.instanceId).toMatch(/^[0-9a-f]{8}$/);
    expect(config.now).toBe(Date.now);
    expect(config.table.get('GET /paid')?.requirements[0]?.amount).toBe('1000');
  });

  it('takes a number over its default, and lists every number that is negative or not finite', () => {
    expect(parseGateOptions(options({ leaseMs: 0, inFlightWaitMs: 50 })).settings).toMatchObject({
      leaseMs: 0,
      inFlightWaitMs: 50,
      pollIntervalMs: PAYMENT_GATE_DEFAULTS.pollIntervalMs,
    });
    expect(problemsOf(() => parseGateOptions(options({ leaseMs: -1, pollIntervalMs: Number.NaN })))).toEqual([
      'pollIntervalMs must be a non-negative number',
      'leaseMs must be a non-negative number',
    ]);
  });

  it('uses a compiled route table as it is', () => {
    const table = compileRoutes({ 'GET /x': { accepts } }, { schemes: [createSimpleScheme()] });
    expect(parseGateOptions(options({ routes: table })).table).toBe(table);
  });

  it('refuses missing options, routes and facilitator at once', () => {
    expect(problemsOf(() => parseGateOptions(undefined as never))).toEqual(['options are required']);
    expect(
      problemsOf(() =>
        parseGateOptions({ schemes: [createSimpleScheme()] } as unknown as PaymentGateOptions),
      ),
    ).toEqual(['facilitator is required (e.g. createHttpFacilitatorClient({ url }))', 'routes is required']);
  });

  it('warns once per network without a chain reader, and refuses it under requireChainReader', () => {
    const logger = { warn: vi.fn(), error: vi.fn() };
    parseGateOptions(
      options({
        routes: { 'GET /a': { accepts }, 'GET /b': { accepts } },
        schemes: [withoutChainReader()],
        logger,
      }),
    );
    expect(logger.warn).toHaveBeenCalledTimes(1);
    expect(logger.warn.mock.calls[0]![0]).toEqual({ code: 'no_chain_reader' });
    expect(logger.warn.mock.calls[0]![1]).toContain('eip155:8453 (scheme exact) has no chain reader');
    expect(
      problemsOf(() =>
        parseGateOptions(options({ schemes: [withoutChainReader()], requireChainReader: true })),
      ),
    ).toEqual([
      'requireChainReader: eip155:8453 (scheme exact) has no chain reader, so uncertain settlements could not be resolved',
    ]);
  });
});

describe('parseGateOptions, each option', () => {
  it('refuses options that are no object', () => {
    expect(problemsOf(() => parseGateOptions('routes' as never))).toEqual(['options are required']);
  });

  it('names the payment gate options in the message of its error, one problem a line', () => {
    expect(() => parseGateOptions(undefined as never)).toThrow(
      'invalid payment gate options:\n- options are required',
    );
    expect(() => parseGateOptions(options({ leaseMs: -1, retentionMs: -1 }))).toThrow(
      'invalid payment gate options:\n- leaseMs must be a non-negative number\n- retentionMs must be a non-negative number',
    );
  });

  it('lists only the route problems of routes that do not compile, under requireChainReader too', () => {
    const routes = { 'GET /x': { accepts: { ...accepts, price: '$0' } } };
    expect(problemsOf(() => parseGateOptions(options({ routes, requireChainReader: true })))).toEqual([
      expect.stringContaining('route "GET /x"'),
    ]);
  });

  it.each([
    [Number.POSITIVE_INFINITY, 'retentionMs'],
    [-0.5, 'reconcileIntervalMs'],
    ['5', 'maxPaymentHeaderBytes'],
  ] as const)('refuses %s as %s', (value, key) => {
    expect(problemsOf(() => parseGateOptions(options({ [key]: value } as never)))).toEqual([
      `${key} must be a non-negative number`,
    ]);
  });

  it('takes every number given, 0 included, and ignores one given as undefined', () => {
    const given = {
      maxPaymentHeaderBytes: 1,
      inFlightWaitMs: 0,
      pollIntervalMs: 3,
      leaseMs: 4,
      reconcileIntervalMs: 5,
      retentionMs: 6,
      maxIdentifiedBodyBytes: 7,
    };
    expect(parseGateOptions(options(given)).settings).toEqual(given);
    expect(parseGateOptions(options({ leaseMs: undefined })).settings.leaseMs).toBe(
      PAYMENT_GATE_DEFAULTS.leaseMs,
    );
  });

  it('keeps what it is given: store, instance id, hooks, logger, clock, other methods, paywall', () => {
    const store = createMemoryLedgerStore({ purgeIntervalMs: 0 });
    const hooks = { onRejected: () => undefined };
    const logger = { warn: vi.fn(), error: vi.fn() };
    const now = () => 42;
    const config = parseGateOptions(
      options({
        ledger: store,
        instanceId: 'alpha',
        hooks,
        logger,
        now,
        otherMethods: 'pass',
        paywall: true,
      }),
    );
    expect(config).toMatchObject({ store, instanceId: 'alpha', hooks, logger, now, otherMethods: 'pass' });
    expect(typeof config.paywall?.respond).toBe('function');
    expect(parseGateOptions(options({ paywall: false })).paywall).toBeUndefined();
  });

  it('makes a memory store and an instance id of its own for each gate', () => {
    const [a, b] = [parseGateOptions(options()), parseGateOptions(options())];
    expect(a.store).not.toBe(b.store);
    expect(typeof a.store.claim).toBe('function');
    expect(a.instanceId).not.toBe(b.instanceId);
  });

  it('compiles the routes against its baseUrl, and without one builds resource URLs from each request', () => {
    const withBase = parseGateOptions(options({ baseUrl: 'https://api.example.com' }));
    expect(withBase.table.get('GET /paid')!.resourceUrl()).toBe('https://api.example.com/paid');
    const without = parseGateOptions(options());
    expect(without.table.match('GET', 'https://other.example/paid')!.resourceUrl).toBe(
      'https://other.example/paid',
    );
  });

  it.each([
    ['verify only', { verify: async () => ({ isValid: true }) }],
    ['settle only', { settle: async () => ({ success: true }) }],
    ['methods that are not functions', { verify: 1, settle: 2 }],
  ])('refuses a facilitator with %s', (_what, facilitator) => {
    expect(problemsOf(() => parseGateOptions(options({ facilitator: facilitator as never })))).toEqual([
      'facilitator must have verify and settle methods (a FacilitatorClient)',
    ]);
  });

  it.each([
    ['no schemes', undefined],
    ['an empty list', []],
    ['a scheme that is no list', createSimpleScheme()],
  ])('refuses a compiled route table with %s', (_what, schemes) => {
    const table = compileRoutes({ 'GET /x': { accepts } }, { schemes: [createSimpleScheme()] });
    // With requireChainReader too: there is no scheme to look for a chain reader in.
    const parse = () =>
      parseGateOptions(options({ routes: table, schemes: schemes as never, requireChainReader: true }));
    expect(problemsOf(parse)).toEqual([
      'schemes needs at least one scheme server (e.g. createExactEvmScheme())',
    ]);
  });

  it('refuses null routes, and a paywall that is no object', () => {
    expect(
      problemsOf(() => parseGateOptions(options({ routes: null as never, paywall: 'yes' as never }))),
    ).toEqual(['routes is required', 'paywall must be true, false or an object']);
  });

  it('lets an unexpected failure while compiling the routes through as it is', () => {
    const failure = new Error('a getter failed');
    const routes = Object.defineProperty({}, 'GET /x', {
      enumerable: true,
      get() {
        throw failure;
      },
    });
    expect(() => parseGateOptions(options({ routes }))).toThrow(failure);
  });

  it('warns about a scheme without reconcile, and not about one whose reader serves the network', () => {
    const logger = { warn: vi.fn(), error: vi.fn() };
    const { reconcile: _none, ...noReader } = createSimpleScheme();
    parseGateOptions(options({ schemes: [noReader], logger }));
    expect(logger.warn).toHaveBeenCalledWith(
      { code: 'no_chain_reader' },
      "eip155:8453 (scheme exact) has no chain reader: a settlement whose answer is lost stays uncertain (502) until the payer's retry finds it settled or expired",
    );
    const served = vi.fn();
    parseGateOptions(
      options({
        schemes: [{ ...createSimpleScheme(), hasChainReader: () => true }],
        logger: { warn: served, error: vi.fn() },
      }),
    );
    expect(served).not.toHaveBeenCalled();
  });

  it('starts without a chain reader and without a logger, and with requireChainReader when every network has one', () => {
    const { reconcile: _none, ...noReader } = createSimpleScheme();
    expect(parseGateOptions(options({ schemes: [noReader] })).logger).toBeUndefined();
    expect(parseGateOptions(options({ requireChainReader: true })).table.routes).toHaveLength(1);
  });
});

describe('schemeFor', () => {
  it("finds the scheme of a requirement's scheme and network, or none", () => {
    const scheme = createSimpleScheme();
    expect(schemeFor([scheme], { scheme: 'exact', network: 'eip155:1' })).toBe(scheme);
    expect(schemeFor([scheme], { scheme: 'upto', network: 'eip155:1' })).toBeUndefined();
    expect(schemeFor([scheme], { scheme: 'exact', network: 'solana:mainnet' })).toBeUndefined();
  });
});
