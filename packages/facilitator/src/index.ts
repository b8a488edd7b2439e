// @tollbooth/facilitator: serve any FacilitatorClient over the standard x402 facilitator HTTP API.
export { type ChainRpcCheck, type CheckChainRpcOptions, checkChainRpc } from './check-chain-rpc';
export {
  createFacilitatorHandler,
  DEFAULTS,
  type FacilitatorServerOptions,
  type RunningFacilitatorServer,
  startFacilitatorServer,
} from './facilitator-server';
export { createFacilitatorFaultControl, type FacilitatorFaultControl } from './fault-control';
export {
  FACILITATOR_FAULT_MODES,
  FACILITATOR_OPERATIONS,
  type FacilitatorFaultMode,
  type FacilitatorFaultSetting,
  toFaultSetting,
} from './fault-modes';
export {
  FACILITATOR_FAULT_PROXY_DEFAULTS,
  type FacilitatorFaultProxy,
  type FacilitatorFaultProxyOptions,
  type FacilitatorFaultProxyStats,
  startFacilitatorFaultProxy,
} from './fault-proxy';
