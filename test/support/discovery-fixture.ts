import { compileRoutes, type RoutesConfig, type RouteTable } from '@tollbooth/core';
import { createExactEvmScheme } from '@tollbooth/evm';
import { FEE_SERVICE_PAY_TO, type FeeServiceRoutesOptions, feeServiceRoutes } from './discovery-fee-routes';

export const FEE_BASE_URL = 'https://fees.example.com';
export const FEE_FACILITATOR_URL = 'https://facilitator.example.com';
/** USDC on Base, the asset the real exact-EVM scheme resolves USD prices to on eip155:8453. */
export const BASE_USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

/** The real server side of scheme `exact` on EVM (no chain access needed to resolve prices). */
export const feeSchemes = [createExactEvmScheme()];

/** The fee service's production routes config (timing decision paused), with bazaar extensions. */
export function feeRoutesConfig(options: FeeServiceRoutesOptions = {}): RoutesConfig {
  return feeServiceRoutes({ payTo: FEE_SERVICE_PAY_TO, ...options });
}

/** The secret that signs sign-in nonces: the observatory and the landscape sell a sign-in pass. */
export const FEE_SIGN_IN = { secret: 'discovery-test-sign-in-secret-0123456789' };

/** The fee service's production route table, compiled. */
export function buildFeeTable(options: FeeServiceRoutesOptions = {}): RouteTable {
  return compileRoutes(feeRoutesConfig(options), {
    schemes: feeSchemes,
    baseUrl: FEE_BASE_URL,
    signIn: FEE_SIGN_IN,
  });
}
