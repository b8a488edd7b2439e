// @tollbooth/facilitator: serve any FacilitatorClient over the standard x402 facilitator HTTP API.
export { type ChainRpcCheck, type CheckChainRpcOptions, checkChainRpc } from './check-chain-rpc';
export {
  createFacilitatorHandler,
  DEFAULTS,
  type FacilitatorServerOptions,
  type RunningFacilitatorServer,
  startFacilitatorServer,
} from './facilitator-server';
export {
  createFacilitatorFaultControl,
  FACILITATOR_FAULT_MODES,
  FACILITATOR_FAULT_PROXY_DEFAULTS,
  FACILITATOR_OPERATIONS,
  type FacilitatorFaultControl,
  type FacilitatorFaultMode,
  type FacilitatorFaultProxy,
  type FacilitatorFaultProxyOptions,
  type FacilitatorFaultProxyStats,
  type FacilitatorFaultSetting,
  startFacilitatorFaultProxy,
  toFaultSetting,
} from './fault-proxy';
