// @tollbooth/core/testing: doubles for testing code built on the gate. The scripted facilitator
// stands in for an outside service; the simple scheme checks payloads structurally only.

export { fetchResponseHead, type ResponseHead } from './response-head';
export {
  createScriptedFacilitator,
  type ScriptedFacilitator,
  type SettleScript,
  TEST_TX,
  type VerifyScript,
} from './scripted-facilitator';
export {
  buildPayment,
  createSimpleScheme,
  type SimpleScheme,
  TEST_ASSET,
  TEST_PAY_TO,
  TEST_PAYER,
} from './simple-scheme';
