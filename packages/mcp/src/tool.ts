import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import {
  type PaidRequest,
  type PaymentOption,
  type RouteConfig,
  type RoutesConfig,
  TOOL_METHOD,
} from '@tollbooth/core';
import type * as z from 'zod';

/** What a tool's handler gets beside its validated arguments. */
export interface ToolContext {
  /** The payment the gate accepted for this call; `undefined` for a free tool. */
  payment: PaidRequest | undefined;
  /** Aborted when the client cancels the call or goes away. */
  signal: AbortSignal;
  /** The call's `_meta`, as the client sent it (payment keys included). */
  meta: Readonly<Record<string, unknown>>;
}

/** The gate options of a paid tool's route, beside its price (`RouteConfig` of `@tollbooth/core`). */
export type ToolRouteOptions = Pick<
  RouteConfig,
  | 'availability'
  | 'settle'
  | 'retryAfterSeconds'
  | 'paymentIdentifier'
  | 'precondition'
  | 'extensions'
  | 'acceptV1Payments'
>;

/**
 * A tool, declared like a route: a name, a description, a zod input schema, a price (`accepts`;
 * absent: a free tool) and a handler. A paid tool is sold through the payment gate under its own
 * route, `TOOL /<name>`, whose resource URL is `resource` (default `mcp://tool/<name>`).
 */
export interface ToolDefinition<I extends z.ZodObject = z.ZodObject> {
  /** The MCP tool name: letters, digits, `_`, `-`, `.` (1 to 128). */
  name: string;
  title?: string;
  /** What the tool does; a paid tool's listing adds its price. */
  description: string;
  /** The arguments, validated before any challenge (a free tool may take none). */
  input?: I;
  /** The `structuredContent` of a successful result; a paid tool's listed schema is widened (docs/mcp.md#output-schemas). */
  output?: z.ZodObject;
  annotations?: ToolAnnotations;
  /** What a call costs. Absent: the tool is free and never meets the gate. */
  accepts?: PaymentOption | PaymentOption[];
  /** The resource URL payments for this tool name. Default `mcp://tool/<name>`. */
  resource?: string;
  /** The route's other gate options (availability, payment identifier, precondition…). */
  route?: ToolRouteOptions;
  /**
   * Runs the tool. A result with `isError: true`, or a throw, is never settled: the payment is
   * released and the payer may use it again.
   */
  handler(args: z.output<I>, context: ToolContext): CallToolResult | Promise<CallToolResult>;
}

/** Any tool definition, whatever its input schema. */
// biome-ignore lint/suspicious/noExplicitAny: a list holds tools of every input type
export type AnyTool = ToolDefinition<any>;

/**
 * Declares a tool with its argument type inferred from `input`.
 * @example
 * const forecast = defineTool({
 *   name: 'forecast', description: 'Tomorrow in a city', input: z.object({ city: z.string() }),
 *   accepts: { network: 'eip155:8453', payTo, price: '$0.01' },
 *   handler: ({ city }) => ({ content: [{ type: 'text', text: `Sunny in ${city}` }] }),
 * });
 */
export function defineTool<I extends z.ZodObject = z.ZodObject>(
  definition: ToolDefinition<I>,
): ToolDefinition<I> {
  return definition;
}

/** The gate's route key of a paid tool: `TOOL /<name>`. */
export function toolRouteKey(name: string): string {
  return `${TOOL_METHOD} /${name}`;
}

/** Whether a tool is sold through the gate. */
export function isPaidTool(tool: AnyTool): boolean {
  return tool.accepts !== undefined;
}

/**
 * The gate routes of the paid tools, to merge into the gate's routes (one gate and one ledger for
 * HTTP and MCP: docs/mcp.md#one-gate-one-ledger). Tool routes take v1 payments too, so v1 MCP
 * clients can pay (`acceptV1Payments`, unless a tool's `route` says otherwise).
 * @example
 * const gate = createPaymentGate({ routes: { ...httpRoutes, ...toolRoutes(tools) }, schemes, facilitator });
 */
export function toolRoutes(tools: readonly AnyTool[]): RoutesConfig {
  const routes: RoutesConfig = {};
  for (const tool of tools) {
    if (!isPaidTool(tool)) continue;
    routes[toolRouteKey(tool.name)] = {
      accepts: tool.accepts!,
      description: tool.description,
      mimeType: 'application/json',
      acceptV1Payments: true,
      ...tool.route,
      ...(tool.resource === undefined ? {} : { resource: tool.resource }),
    };
  }
  return routes;
}
