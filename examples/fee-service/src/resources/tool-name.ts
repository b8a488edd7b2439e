import type { AnyResource } from './kit';

/**
 * The MCP tool name of a resource: its operationId in snake case (`getFeePreview` →
 * `get_fee_preview`). The tool is served under it (`mcp/tools.ts`) and its calls are counted under
 * the resource's limits by it (`edge.ts`).
 */
export function toolNameOf(resource: AnyResource): string {
  return resource.discovery.operationId.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}
