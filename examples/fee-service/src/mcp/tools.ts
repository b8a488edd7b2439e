import { randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PaidRequest, RouteConfig } from '@tollbooth/core';
import { type AnyTool, defineTool, type ToolContext } from '@tollbooth/mcp';
import * as z from 'zod';
import { acceptsOf } from '../capabilities';
import { errorResult, requestIdOf } from '../http/respond';
import type { RouteContext, RouteResult } from '../http/types';
import { encodeResult, toGateResponse } from '../mount/shared';
import { unsellable, validateInput } from '../resources/input';
import {
  type AnyResource,
  isBuilt,
  isPaid,
  type ResourceEnvironment,
  type ResourceInput,
} from '../resources/kit';
import { outputOf, PAUSED_RETRY_AFTER_SECONDS, type Publication, resourceRunner } from '../resources/publish';
import { toolNameOf } from '../resources/tool-name';

/** The parts of a resource's input, by argument name: a tool takes them as one flat object. */
interface InputParts {
  schema: z.ZodObject | undefined;
  partOf: Map<string, 'params' | 'query' | 'body'>;
}

/**
 * A resource's input as one tool argument object: the fields of its path, query and body schemas
 * side by side (the registry's own schemas, no second list).
 * @throws TypeError for a part that is no object schema, or one argument name in two parts
 */
function inputPartsOf(resource: AnyResource): InputParts {
  const partOf = new Map<string, 'params' | 'query' | 'body'>();
  const shape: Record<string, z.ZodType> = {};
  const parts = [
    ['params', resource.input?.pathParams],
    ['query', resource.input?.queryParams],
    ['body', resource.input?.body],
  ] as const;
  for (const [part, schema] of parts) {
    if (schema === undefined) continue;
    if (!(schema instanceof z.ZodObject))
      throw new TypeError(`${resource.path}: ${part} is no object schema`);
    for (const [name, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
      if (partOf.has(name)) throw new TypeError(`${resource.path}: argument ${name} is in two parts`);
      partOf.set(name, part);
      shape[name] = field;
    }
  }
  return { schema: partOf.size === 0 ? undefined : z.strictObject(shape), partOf };
}

/** The HTTP twin's request parts of a tool call's arguments, as `validateInput` reads a request. */
function rawInputOf(args: Record<string, unknown>, parts: InputParts) {
  const params: Record<string, string> = {};
  const query = new URLSearchParams();
  const body: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(args)) {
    const part = parts.partOf.get(name);
    if (part === 'params') params[name] = String(value);
    else if (part === 'query' && value !== undefined) query.set(name, String(value));
    else if (part === 'body') body[name] = value;
  }
  const takesBody = [...parts.partOf.values()].includes('body');
  return { params, query: query.toString(), body: takesBody ? Buffer.from(JSON.stringify(body)) : undefined };
}

/** A resource's answer as a tool result: its JSON as text and as `structuredContent`; 400 or more is `isError`. */
export function toCallToolResult(result: RouteResult): CallToolResult {
  const encoded = encodeResult(result);
  const text = encoded.body === undefined ? '' : encoded.body.toString();
  let structured: Record<string, unknown> | undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      structured = parsed as Record<string, unknown>;
  } catch {
    structured = undefined;
  }
  return {
    content: [{ type: 'text', text }],
    ...(structured ? { structuredContent: structured } : {}),
    ...(result.status >= 400 ? { isError: true } : {}),
  };
}

/** What the tool's handler gives the resource as its request: the HTTP twin's URL, no headers. */
function routeContextOf(
  resource: AnyResource,
  env: ResourceEnvironment,
  raw: ReturnType<typeof rawInputOf>,
  payment: PaidRequest | undefined,
  requestId: string,
): RouteContext {
  const path = resource.path.replace(/:([A-Za-z_]\w*)/g, (_, name: string) =>
    encodeURIComponent(raw.params[name] ?? ''),
  );
  const target = raw.query === '' ? path : `${path}?${raw.query}`;
  return {
    method: resource.method,
    url: new URL(target, env.baseUrl),
    target,
    params: raw.params,
    header: () => undefined,
    requestId,
    payment,
    readBody: async () => raw.body ?? Buffer.alloc(0),
  };
}

/**
 * What a paid tool's precondition parsed, by the call's arguments object: the gate's request
 * carries the very object the tool's handler is then given, so the handler takes the input as it
 * is (validated once, as on the HTTP route).
 */
const PARSED = new WeakMap<object, ResourceInput<never>>();

/**
 * Before any challenge, as the HTTP route's precondition: the resource's own precondition (503 with
 * no snapshot), its `check` of the arguments (a transaction that cannot parse) and whether it has
 * anything to sell for them (`sellable`: an observatory window with nothing scored).
 */
function toolPrecondition(
  resource: AnyResource,
  env: ResourceEnvironment,
  parts: InputParts,
): RouteConfig['precondition'] {
  return (request) => {
    const requestId = requestIdOf((name) => request.header(name));
    const early = resource.precondition?.(requestId, env.capabilities);
    if (early) return toGateResponse(early);
    if (!resource.check && !resource.sellable) return undefined;
    const args = (request.raw as { arguments?: Record<string, unknown> } | undefined)?.arguments ?? {};
    const outcome = validateInput(resource, rawInputOf(args, parts), requestId, env);
    if (!outcome.ok) return toGateResponse(outcome.result);
    PARSED.set(args, outcome.input as ResourceInput<never>);
    if (!resource.sellable) return undefined;
    return unsellable(resource, outcome.input, env, requestId).then((refusal) =>
      refusal ? toGateResponse(refusal) : undefined,
    );
  };
}

/** A built resource as a tool: its input, its price and route options, its handler. */
function toolOf(
  publication: Publication,
  env: ResourceEnvironment,
  terms: Parameters<typeof acceptsOf>[0],
): AnyTool {
  const { resource, availability } = publication;
  const parts = inputPartsOf(resource);
  const run = resourceRunner(resource, env);
  const output = outputOf(resource, env);
  const price = resource.price;
  const handler = async (args: Record<string, unknown>, context: ToolContext): Promise<CallToolResult> => {
    const requestId = context.payment?.requestId ?? randomUUID();
    // A paid tool's availability is the gate's; a free one answers as its HTTP route does.
    if (!price && availability !== 'active')
      return toCallToolResult(
        errorResult({
          status: 503,
          code: 'resource_paused',
          requestId,
          retryable: true,
          message: `${publication.key} is paused: ${publication.reason ?? 'by the operator'}`,
        }),
      );
    const raw = rawInputOf(args, parts);
    let input = PARSED.get(args);
    if (!input) {
      const outcome = validateInput(resource, raw, requestId, env);
      if (!outcome.ok) return toCallToolResult(outcome.result);
      input = outcome.input as ResourceInput<never>;
    }
    return toCallToolResult(await run(routeContextOf(resource, env, raw, context.payment, requestId), input));
  };
  return defineTool({
    name: toolNameOf(resource),
    description: resource.description,
    ...(parts.schema ? { input: parts.schema } : {}),
    ...(output instanceof z.ZodObject ? { output } : {}),
    annotations: { readOnlyHint: resource.method === 'GET', openWorldHint: true },
    ...(price
      ? {
          accepts: acceptsOf(terms, price.amount, price.maxTimeoutSeconds),
          route: {
            availability,
            retryAfterSeconds: PAUSED_RETRY_AFTER_SECONDS,
            paymentIdentifier: true,
            ...(resource.gate?.settle ? { settle: resource.gate.settle } : {}),
            ...(resource.gate?.reserveBalance ? { reserveBalance: true } : {}),
            precondition: toolPrecondition(resource, env, parts),
          },
        }
      : {}),
    handler,
  });
}

/**
 * The fee service's MCP tools, from the resource registry: every built paid resource as a paid
 * tool (its price, its input schema, its handler), and the free preview as a free tool. Each
 * tool is the resource's twin, sold under its own resource URL (docs/mcp.md#one-gate-one-ledger).
 */
export function buildTools(
  publications: readonly Publication[],
  env: ResourceEnvironment,
  terms: Parameters<typeof acceptsOf>[0],
): AnyTool[] {
  return publications
    .filter(({ resource }) => isBuilt(resource) && (isPaid(resource) || resource.tool === true))
    .map((publication) => toolOf(publication, env, terms));
}
