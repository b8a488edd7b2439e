// @tollbooth/fetch/mcp: a paying MCP client for x402 tools (docs/mcp.md#a-paying-mcp-client).
export {
  challengeOf,
  createPayingMcpClient,
  type PaidToolCall,
  type PayingMcpClient,
  type PayingMcpClientOptions,
  receiptOf,
} from './paying-mcp-client';
