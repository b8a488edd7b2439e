import { compileRoutes, type RouteTable } from '@tollbooth/core';
import { FEE_SERVICE_PAY_TO, type FeeServiceRoutesOptions, feeServiceRoutes } from './discovery-fee-routes';
import { createDiscoveryTestScheme } from './discovery-test-scheme';

export const FEE_BASE_URL = 'https://fees.example.com';
export const FEE_FACILITATOR_URL = 'https://facilitator.example.com';

/** The fee service's production route table (timing decision paused), compiled. */
export function buildFeeTable(options: FeeServiceRoutesOptions = {}): RouteTable {
  return compileRoutes(feeServiceRoutes({ payTo: FEE_SERVICE_PAY_TO, ...options }), {
    schemes: [createDiscoveryTestScheme()],
    baseUrl: FEE_BASE_URL,
  });
}
