import { describe, expect, it } from 'vitest';
import { TollboothConfigError } from '../errors/config-error';
import type { AssetAmount, Price, SchemeServer } from '../scheme';
import { createSimpleScheme, TEST_ASSET, TEST_PAY_TO } from '../test-support/simple-scheme';
import { compileRoutes } from './compile-routes';
import type { PaymentOption, RouteConfig } from './types';

const option: PaymentOption = { network: 'eip155:8453', payTo: TEST_PAY_TO, price: '$0.01' };

/** The problems compileRoutes lists for the route `GET /x`, or `[]` when it compiles. */
function problemsOf(
  route: Partial<RouteConfig>,
  schemes: SchemeServer[] = [createSimpleScheme()],
): readonly string[] {
  try {
    compileRoutes({ 'GET /x': route as RouteConfig }, { schemes });
  } catch (error) {
    if (error instanceof TollboothConfigError) return error.problems;
    throw error;
  }
  return [];
}

/** The requirements of the route `GET /x` paid with these options. */
function requirementsOf(accepts: RouteConfig['accepts'], schemes: SchemeServer[] = [createSimpleScheme()]) {
  return compileRoutes({ 'GET /x': { accepts } }, { schemes }).get('GET /x')!.requirements;
}

/** A scheme server that prices everything in one asset of its own. */
function fixedScheme(scheme: string, networkPrefix: string, asset: string): SchemeServer {
  return {
    ...createSimpleScheme(),
    scheme,
    supportsNetwork: (network) => network.startsWith(networkPrefix),
    resolvePrice: (_price: Price): AssetAmount => ({ amount: '7', asset }),
  };
}

describe('payment options', () => {
  it.each([
    ['missing', undefined],
    ['an empty list', []],
    ['null', null],
  ])('are refused when %s', (_case, accepts) => {
    expect(problemsOf({ accepts: accepts as never })).toEqual([
      'route "GET /x": accepts needs at least one payment option',
    ]);
  });

  it.each([null, 'eip155:8453', 3, [option]])('are refused one by one when an option is %j', (bad) => {
    expect(problemsOf({ accepts: [option, bad as never] })).toEqual([
      'route "GET /x" accepts[1]: must be an object { network, payTo, price }',
    ]);
  });

  it.each([
    [
      'an empty scheme name',
      { scheme: '' },
      ['scheme must be a name', 'no scheme server for  on eip155:8453'],
    ],
    [
      'a scheme name that is no string',
      { scheme: 5 },
      ['scheme must be a name', 'no scheme server for 5 on eip155:8453'],
    ],
    ['an unknown scheme', { scheme: 'upto' }, ['no scheme server for upto on eip155:8453']],
    ['a network no scheme serves', { network: 'solana:abc' }, ['no scheme server for exact on solana:abc']],
    ['a timeout of 0', { maxTimeoutSeconds: 0 }, ['maxTimeoutSeconds must be a positive integer']],
    ['a fractional timeout', { maxTimeoutSeconds: 1.5 }, ['maxTimeoutSeconds must be a positive integer']],
    ['extra that is null', { extra: null }, ['extra must be an object']],
    ['extra that is a list', { extra: [] }, ['extra must be an object']],
    ['no payTo', { payTo: undefined }, ['payTo is required']],
    ['a payTo that is no string', { payTo: 42 }, ['payTo is required']],
    ['a null price', { price: null }, ['price is required ("$0.001", 0.001 or { amount, asset })']],
    ['no price', { price: undefined }, ['price is required ("$0.001", 0.001 or { amount, asset })']],
  ])('are refused with %s', (_case, change, problems) => {
    expect(problemsOf({ accepts: { ...option, ...(change as object) } as PaymentOption })).toEqual(
      problems.map((problem) => `route "GET /x" accepts[0]: ${problem}`),
    );
  });

  it('are refused on a v1 route when the network has no x402 v1 name', () => {
    expect(problemsOf({ accepts: { ...option, network: 'eip155:999999' }, x402Version: 1 })).toEqual([
      'route "GET /x" accepts[0]: network eip155:999999 has no x402 v1 name',
    ]);
    expect(problemsOf({ accepts: option, x402Version: 1 })).toEqual([]);
  });

  it.each(['1.5', '-5', '5x', 'x5', '0', '00', ''])(
    'are refused when the price comes to %j atomic units',
    (amount) => {
      const price = { amount, asset: TEST_ASSET };
      expect(problemsOf({ accepts: { ...option, price } })).toEqual([
        `route "GET /x" accepts[0]: price ${JSON.stringify(price)} is ${amount} atomic units: a paid route must cost more than 0 (leave a free route out of the routes)`,
      ]);
    },
  );

  it.each(['1', '05', '1000000000000000000000'])('take a price of %j atomic units as it is', (amount) => {
    expect(requirementsOf({ ...option, price: { amount, asset: TEST_ASSET } })[0]?.amount).toBe(amount);
  });

  it('take a timeout of one second', () => {
    expect(requirementsOf({ ...option, maxTimeoutSeconds: 1 })[0]?.maxTimeoutSeconds).toBe(1);
  });

  it("merge the option's extra over the scheme's", () => {
    expect(requirementsOf({ ...option, extra: { version: '3', chainId: 8453 } })[0]?.extra).toEqual({
      name: 'USD Coin',
      version: '3',
      chainId: 8453,
    });
    expect(requirementsOf({ ...option, price: { amount: '5', asset: TEST_ASSET } })[0]?.extra).toEqual({});
  });

  it('are priced by the scheme server of their scheme and network, whatever the order of the servers', () => {
    const schemes = [
      fixedScheme('exact', 'solana:', 'SOL-ASSET'),
      fixedScheme('upto', 'eip155:', 'UPTO-ASSET'),
      createSimpleScheme(),
    ];
    const [exact, upto, onSolana] = requirementsOf(
      [option, { ...option, scheme: 'upto' }, { ...option, network: 'solana:mainnet' }],
      schemes,
    );
    expect(exact).toMatchObject({
      scheme: 'exact',
      network: 'eip155:8453',
      amount: '10000',
      asset: TEST_ASSET,
    });
    expect(upto).toMatchObject({ scheme: 'upto', network: 'eip155:8453', amount: '7', asset: 'UPTO-ASSET' });
    expect(onSolana).toMatchObject({
      scheme: 'exact',
      network: 'solana:mainnet',
      amount: '7',
      asset: 'SOL-ASSET',
    });
  });
});
