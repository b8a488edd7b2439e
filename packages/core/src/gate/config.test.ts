import { describe, expect, it, vi } from 'vitest';
import { TollboothConfigError } from '../errors/config-error';
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

describe('schemeFor', () => {
  it("finds the scheme of a requirement's scheme and network, or none", () => {
    const scheme = createSimpleScheme();
    expect(schemeFor([scheme], { scheme: 'exact', network: 'eip155:1' })).toBe(scheme);
    expect(schemeFor([scheme], { scheme: 'upto', network: 'eip155:1' })).toBeUndefined();
    expect(schemeFor([scheme], { scheme: 'exact', network: 'solana:mainnet' })).toBeUndefined();
  });
});
