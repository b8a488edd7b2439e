// Test support: a scripted double of an OUTSIDE service (a facilitator), answering what each
// test scripts: valid, invalid, timeout, 5xx, garbage, settlement_pending, success.
import { FacilitatorError } from '../facilitator/facilitator-error';
import type { FacilitatorClient } from '../facilitator/types';
import type { SettleResponse, SupportedResponse, VerifyResponse } from '../protocol/schemas';

export type VerifyScript = 'valid' | 'invalid' | 'insufficient' | 'timeout' | '5xx' | 'garbage';
export type SettleScript =
  | 'success'
  | 'failure'
  | 'invalid'
  | 'pending'
  | 'timeout'
  | 'unreachable'
  | '5xx'
  | 'garbage';

export interface ScriptedFacilitator extends FacilitatorClient {
  verifyScript: VerifyScript;
  settleScript: SettleScript;
  /** Delay before each answer, ms. */
  delayMs: number;
  calls: { verify: number; settle: number };
}

export const TEST_TX = `0x${'7'.repeat(64)}`;

export function createScriptedFacilitator(): ScriptedFacilitator {
  const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const facilitator: ScriptedFacilitator = {
    verifyScript: 'valid',
    settleScript: 'success',
    delayMs: 0,
    calls: { verify: 0, settle: 0 },
    async verify(payload): Promise<VerifyResponse> {
      facilitator.calls.verify++;
      if (facilitator.delayMs) await wait(facilitator.delayMs);
      const payer = (payload.payload as { authorization?: { from?: string } }).authorization?.from;
      switch (facilitator.verifyScript) {
        case 'valid':
          return { isValid: true, payer };
        case 'invalid':
          return { isValid: false, invalidReason: 'invalid_exact_evm_signature', payer };
        case 'insufficient':
          return { isValid: false, invalidReason: 'invalid_exact_evm_insufficient_balance', payer };
        case 'timeout':
          throw new FacilitatorError('timeout', 'verify', 'no answer within 10000 ms');
        case '5xx':
          throw new FacilitatorError('http-5xx', 'verify', 'HTTP 503', { httpStatus: 503 });
        case 'garbage':
          throw new FacilitatorError('invalid-response', 'verify', 'HTTP 200 with an unexpected body');
      }
    },
    async settle(payload, requirements): Promise<SettleResponse> {
      facilitator.calls.settle++;
      if (facilitator.delayMs) await wait(facilitator.delayMs);
      const payer = (payload.payload as { authorization?: { from?: string } }).authorization?.from;
      const network = requirements.network;
      switch (facilitator.settleScript) {
        case 'success':
          return { success: true, transaction: TEST_TX, network, payer };
        case 'failure':
          return {
            success: false,
            errorReason: 'invalid_exact_evm_insufficient_balance',
            transaction: '',
            network,
            payer,
          };
        case 'invalid':
          return {
            success: false,
            errorReason: 'invalid_exact_evm_signature',
            transaction: '',
            network,
            payer,
          };
        case 'pending':
          return { success: false, errorReason: 'settlement_pending', transaction: TEST_TX, network, payer };
        case 'timeout':
          throw new FacilitatorError('timeout', 'settle', 'no answer within 30000 ms');
        case 'unreachable': {
          // What the HTTP client throws when undici's connection is refused.
          const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4021'), {
            code: 'ECONNREFUSED',
          });
          const cause = new TypeError('fetch failed', { cause: refused });
          throw new FacilitatorError('network', 'settle', 'fetch failed', { cause, unreached: true });
        }
        case '5xx':
          throw new FacilitatorError('http-5xx', 'settle', 'HTTP 502', { httpStatus: 502 });
        case 'garbage':
          throw new FacilitatorError('invalid-response', 'settle', 'HTTP 200 with an unexpected body');
      }
    },
    async supported(): Promise<SupportedResponse> {
      return {
        kinds: [{ x402Version: 2, scheme: 'exact', network: 'eip155:8453' }],
        extensions: [],
        signers: {},
      };
    },
  };
  return facilitator;
}
