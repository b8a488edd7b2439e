export { coversNetwork } from './audits-supported';
export { REFUSALS, type Refusal } from './audits-verify';
export {
  type AuditChain,
  type AuditChainConfig,
  type Authorization,
  createAuditChain,
  eip3009Abi,
} from './chain';
export { type AuditDevnet, type StartAuditDevnetOptions, startAuditDevnet } from './devnet';
export {
  createFacilitatorEndpoint,
  type FacilitatorAnswer,
  type FacilitatorEndpoint,
  type FacilitatorEndpointName,
  type FacilitatorEndpointOptions,
  FacilitatorUnreachable,
} from './endpoint';
export {
  type AuditPayment,
  type AuditRequirements,
  buildPayment,
  buildV1Payment,
  type PaymentDefects,
  V1_NETWORK_NAMES,
} from './payments';
export {
  AuditSetupError,
  ChainUnreachable,
  type EndpointTimings,
  FACILITATOR_AUDITS,
  type FacilitatorAuditReport,
  type FacilitatorTarget,
  type RunFacilitatorAuditsOptions,
  runFacilitatorAudits,
} from './run';
export type { FacilitatorAudit, FacilitatorAuditContext, FacilitatorAuditNeed, SupportedView } from './types';
