// @tollbooth/mcp: paid MCP tools sold through the Tollbooth payment gate (the x402 MCP transport).
export { callTool, type ValidatedCall } from './call-tool';
export { describePrice, listTool, widenedOutputSchema } from './listing';
export {
  PAYMENT_META_KEY,
  PAYMENT_RESPONSE_META_KEY,
  PRICE_META_KEY,
  V1_PAYMENT_META_KEY,
  V1_PAYMENT_RESPONSE_META_KEY,
} from './meta-keys';
export { type MetaPayment, readMetaPayment, type ToolCall, toToolRequestView } from './request-view';
export {
  createToolServer,
  createToolServerPool,
  registerTools,
  type ToolServerOptions,
  type ToolServerPool,
} from './server';
export {
  type AnyTool,
  defineTool,
  isPaidTool,
  type ToolContext,
  type ToolDefinition,
  type ToolRouteOptions,
  toolRouteKey,
  toolRoutes,
} from './tool';
export { isToolResult, TOOL_RESULT_MEDIA_TYPE, toHandlerResponse, toToolResult } from './tool-result';
