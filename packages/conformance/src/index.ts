// @tollbooth/conformance: audits with stable ids and RFC 2119 sentences that judge x402 resource
// servers (over HTTP, any framework) and facilitators (over their HTTP API, on a real chain).

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
export {
  renderAuditsMarkdown,
  renderFacilitatorAuditsMarkdown,
  renderFaultAuditsMarkdown,
  renderMcpAuditsMarkdown,
  withGeneratedTables,
} from './audits-table';
export * from './facilitator/index';
export * from './faults/index';
export {
  AUDIT_EXPOSED_HEADER,
  AUDIT_HANDLER_COOKIE,
  AUDIT_PATHS,
  type AuditFixture,
  type AuditFixtureOptions,
  type AuditHandlerAnswer,
  type AuditRoute,
  type AuditRouteName,
  auditCorsHeaders,
  createAuditFixture,
} from './fixture';
export { RateLimited, retryAfterMs, TargetUnreachable } from './http';
export * from './mcp/index';
export {
  type AuditStatus,
  type AuditSummary,
  exitCodeOf,
  summarize,
} from './results';
export {
  type AuditResult,
  type AuditServer,
  type AuditTarget,
  auditsOf,
  probeServer,
  type RunAuditsOptions,
  runAudit,
  runAudits,
} from './run-audits';
export type * from './types';
