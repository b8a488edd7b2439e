export { MCP_AUDITS } from './audits';
export { type McpTarget, type RunMcpAuditsOptions, runMcpAudits } from './run';
export type { McpAudit, McpAuditContext, McpCall } from './types';
