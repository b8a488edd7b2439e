import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { fromAtomicAmount, type PaymentRequirements, type TollboothGate } from '@tollbooth/core';
import * as z from 'zod';
import { PAYMENT_META_KEY, PRICE_META_KEY } from './meta-keys';
import { type AnyTool, isPaidTool, toolRouteKey } from './tool';

/** A PaymentRequired (v2, or a v1 client's), as a paid tool's widened output schema admits it. */
const PAYMENT_REQUIRED_SCHEMA = {
  type: 'object',
  required: ['x402Version', 'accepts'],
  properties: {
    x402Version: { type: 'integer' },
    error: { type: 'string' },
    resource: { type: 'object' },
    accepts: { type: 'array', items: { type: 'object' } },
  },
} as const;

/** The Error body of the gate's other answers (settlement_uncertain, payment_in_progress, …). */
const ERROR_BODY_SCHEMA = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' }, retryable: { type: 'boolean' } },
    },
  },
} as const;

/** Tokens listed in a price sentence by amount in whole units (6 decimals: USDC). */
const SIX_DECIMAL_NAMES = new Set(['USDC', 'USD Coin']);

/** JSON Schema of a zod object, without `$schema` (it sits inside an MCP tool definition). */
function jsonSchemaOf(schema: z.ZodObject, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return rest;
}

/**
 * A paid tool's output schema, widened so every result it may answer validates: the declared
 * result, a PaymentRequired (challenge, refusal) or an Error body. Strict MCP clients validate
 * `structuredContent` against it even on `isError` results (docs/mcp.md#output-schemas).
 */
export function widenedOutputSchema(output: z.ZodObject): Tool['outputSchema'] {
  return {
    type: 'object',
    anyOf: [jsonSchemaOf(output, 'output'), PAYMENT_REQUIRED_SCHEMA, ERROR_BODY_SCHEMA],
  };
}

/** "0.01 USDC on eip155:8453", or the amount in atomic units of an asset it cannot name. */
export function describePrice(requirement: PaymentRequirements): string {
  const name = requirement.extra?.['name'];
  if (typeof name === 'string' && SIX_DECIMAL_NAMES.has(name))
    return `${fromAtomicAmount(requirement.amount, 6)} USDC on ${requirement.network}`;
  return `${requirement.amount} atomic units of ${requirement.asset} on ${requirement.network}`;
}

/**
 * A tool as `tools/list` shows it. A paid tool's price is in its description and, with its
 * resource URL and requirements, in `_meta["tollbooth/price"]`, so an agent knows the cost before
 * calling (docs/mcp.md#prices-before-calling).
 */
export function listTool(tool: AnyTool, gate: Pick<TollboothGate, 'routes'>): Tool {
  const listed: Tool = {
    name: tool.name,
    ...(tool.title === undefined ? {} : { title: tool.title }),
    description: tool.description,
    inputSchema: (tool.input
      ? jsonSchemaOf(tool.input, 'input')
      : { type: 'object', properties: {} }) as Tool['inputSchema'],
    ...(tool.annotations ? { annotations: tool.annotations } : {}),
  };
  if (!isPaidTool(tool)) {
    if (tool.output) listed.outputSchema = jsonSchemaOf(tool.output, 'output') as Tool['outputSchema'];
    return listed;
  }
  const route = gate.routes.get(toolRouteKey(tool.name));
  if (!route) return listed;
  const prices = route.requirements.map(describePrice).join(' or ');
  const sentence = /[.!?]$/.test(tool.description) ? tool.description : `${tool.description}.`;
  listed.description = `${sentence} Costs ${prices} per call, paid with x402 (_meta["${PAYMENT_META_KEY}"]).`;
  listed._meta = { [PRICE_META_KEY]: { resource: route.resourceUrl(), accepts: route.requirements } };
  if (tool.output) listed.outputSchema = widenedOutputSchema(tool.output);
  return listed;
}
