// @tollbooth/conformance: one audit list, with stable ids and RFC 2119 sentences, that proves an
// x402 resource server behaves as Tollbooth requires; framework-agnostic (it only speaks HTTP).

export { type AuditFacilitator, createAuditFacilitator } from './audit-facilitator';
export { AuditFailure, check, checkEqual } from './audit-failure';
export {
  AUDIT_ASSET,
  AUDIT_NETWORK,
  AUDIT_PAY_TO,
  AUDIT_PAYER,
  type AuditScheme,
  auditSignature,
  buildAuditPayment,
  createAuditScheme,
} from './audit-scheme';
export { AUDITS } from './audits/index';
export { renderAuditsMarkdown } from './audits-table';
export {
  AUDIT_EXPOSED_HEADER,
  AUDIT_HANDLER_COOKIE,
  AUDIT_PATHS,
  type AuditFixture,
  type AuditHandlerAnswer,
  type AuditRoute,
  type AuditRouteName,
  auditCorsHeaders,
  createAuditFixture,
} from './fixture';
export {
  type AuditResult,
  type AuditServer,
  type AuditTarget,
  type RunAuditsOptions,
  runAudit,
  runAudits,
} from './run-audits';
export type * from './types';
