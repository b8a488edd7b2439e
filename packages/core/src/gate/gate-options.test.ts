import { describe, expect, it } from 'vitest';
import { TollboothConfigError } from '../errors/config-error';
import { createScriptedFacilitator } from '../test-support/scripted-facilitator';
import { createSimpleScheme, TEST_PAY_TO } from '../test-support/simple-scheme';
import { createPaymentGate } from './create-payment-gate';

const accepts = { network: 'eip155:8453', payTo: TEST_PAY_TO, price: '$0.001' };

function problemsOf(create: () => unknown): readonly string[] {
  try {
    create();
  } catch (error) {
    expect(error).toBeInstanceOf(TollboothConfigError);
    expect((error as TollboothConfigError).code).toBe('invalid_config');
    return (error as TollboothConfigError).problems;
  }
  throw new Error('expected a configuration error');
}

describe('createPaymentGate options', () => {
  it("lists the gate's own problems and the routes' problems in one error", () => {
    const problems = problemsOf(() =>
      createPaymentGate({
        routes: {
          'GET /x': { accepts: { ...accepts, network: 'base' } },
          'GET /y': { accepts: { ...accepts, payTo: '0xYourAddress' } },
        },
        schemes: [createSimpleScheme()],
        facilitator: {} as never,
        baseUrl: 'api.example.com',
        leaseMs: -1,
      }),
    );
    expect(problems).toEqual([
      'facilitator must have verify and settle methods (a FacilitatorClient)',
      'leaseMs must be a non-negative number',
      'baseUrl "api.example.com" is not an absolute http(s) URL',
      'route "GET /x" accepts[0]: network "base" is an x402 v1 name: write it as the CAIP-2 chain id eip155:8453',
      'route "GET /y" accepts[0]: payTo is "0xYourAddress", not an address',
    ]);
  });

  it('reports a missing facilitator, routes and schemes together', () => {
    expect(problemsOf(() => createPaymentGate({ schemes: [] } as never))).toEqual([
      'facilitator is required (e.g. createHttpFacilitatorClient({ url }))',
      'routes is required',
    ]);
    expect(
      problemsOf(() =>
        createPaymentGate({
          routes: { 'GET /x': { accepts } },
          schemes: [],
          facilitator: createScriptedFacilitator(),
        }),
      ),
    ).toEqual([
      'schemes needs at least one scheme server (e.g. createExactEvmScheme())',
      'route "GET /x" accepts[0]: no scheme server for exact on eip155:8453',
    ]);
  });

  it('creates a gate from a valid configuration', () => {
    const gate = createPaymentGate({
      routes: { 'GET /x': { accepts } },
      schemes: [createSimpleScheme()],
      facilitator: createScriptedFacilitator(),
      baseUrl: 'https://api.example.com',
    });
    expect(gate.routes.get('GET /x')!.requirements[0]!.payTo).toBe(TEST_PAY_TO);
  });
});
