// @tollbooth/facilitator: serve any FacilitatorClient over the standard x402 facilitator HTTP API.
export {
  createFacilitatorHandler,
  DEFAULTS,
  type FacilitatorServerOptions,
  type RunningFacilitatorServer,
  startFacilitatorServer,
} from './facilitator-server';
