import * as z from 'zod';
import { TollboothError } from '../errors/tollbooth-error';
import { PaymentRequired } from '../protocol/schemas';
import type { RouteConfig } from '../routes/types';
import { resolveBaseUrl } from './catalog';
import { type JsonSchema, objectMembers, toJsonSchema } from './json-schema';
import { memoByTable } from './memo';
import {
  availabilityOf,
  currentTable,
  type DiscoverableTable,
  type RouteFacts,
  routeFacts,
  routesInOrder,
  type TableSource,
  toTemplatePath,
} from './route-view';

/** The Error body (`docs/errors.md`), as the zod schema the OpenAPI document derives from. */
const ErrorBodySchema = z.object({
  error: z.object({
    code: z.string().describe('Stable error code'),
    message: z.string(),
    request_id: z.string(),
    retryable: z.boolean(),
    retry: z
      .object({ instruction: z.literal('retry_exact_payment_payload') })
      .optional()
      .describe('Present on 502: retry only the exact same payment payload'),
  }),
});

/** A free (unpaid) route to describe in the OpenAPI document beside the paid ones. */
export interface FreeRoute {
  /** `GET`, `POST`, … */
  method: string;
  /** Path with `:name` or `{name}` parameters. */
  path: string;
  summary: string;
  description?: string;
  operationId?: string;
  tags?: string[];
  /** zod schemas (or JSON Schemas) of the request parts. */
  input?: { pathParams?: unknown; queryParams?: unknown; body?: unknown };
  /** zod schema (or JSON Schema) of the 200 body. */
  output?: unknown;
  /** Default `application/json`. */
  mimeType?: string;
  /** Statuses that answer with an Error body, e.g. `[503]` for "no validated snapshot". */
  errorStatuses?: number[];
}

export interface OpenApiOptions {
  /** The route table that drives the gate, or a function returning the current one. */
  table: TableSource;
  /** Public base URL, the document's server. Default: the table's `baseUrl`. */
  baseUrl?: string;
  /** Shown in each paid operation's payment terms. */
  facilitatorUrl?: string;
  /** Default `Tollbooth API`. */
  title?: string;
  /** Default `pre-release` (`docs/fee-service-contract.md#versioning`). */
  version?: string;
  description?: string;
  /** Free routes to document too (the fee preview, health checks, …). */
  freeRoutes?: FreeRoute[];
  usdAssets?: Readonly<Record<string, number>>;
}

/** Defaults of the OpenAPI document. */
export const OPENAPI_DEFAULTS = {
  title: 'Tollbooth API',
  version: 'pre-release',
  openapi: '3.1.0',
} as const;

/** An OpenAPI 3.1.0 document (loosely typed: it is generated and validated as JSON). */
export type OpenApiDocument = {
  openapi: '3.1.0';
  info: { title: string; version: string; description?: string };
  servers: { url: string }[];
  paths: Record<string, Record<string, unknown>>;
  components: Record<string, unknown>;
} & Record<string, unknown>;

/** The OpenAPI document of a table, cached until a route's price or availability changes. */
export interface OpenApiSource {
  document(): OpenApiDocument;
  invalidate(): void;
}

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

function operationIdFor(method: string, templatePath: string): string {
  const words = templatePath
    .replace(/[{}]/g, '')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return [method.toLowerCase(), ...words.map((w) => w[0]!.toUpperCase() + w.slice(1))].join('');
}

interface OperationInput {
  pathParams: JsonSchema | undefined;
  queryParams: JsonSchema | undefined;
  body: JsonSchema | undefined;
  mimeType: string;
  output: JsonSchema | undefined;
}

function parametersOf(input: OperationInput, templatePath: string): Record<string, unknown>[] {
  const parameters: Record<string, unknown>[] = [];
  const names = [...templatePath.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
  const path = objectMembers(input.pathParams);
  for (const name of names) {
    const schema = path.properties[name] ?? { type: 'string' };
    const { description, ...rest } = schema;
    parameters.push({
      name,
      in: 'path',
      required: true,
      ...(typeof description === 'string' ? { description } : {}),
      schema: rest,
    });
  }
  const query = objectMembers(input.queryParams);
  for (const [name, schema] of Object.entries(query.properties)) {
    const { description, ...rest } = schema;
    parameters.push({
      name,
      in: 'query',
      required: query.required.includes(name),
      ...(typeof description === 'string' ? { description } : {}),
      schema: rest,
    });
  }
  return parameters;
}

function baseOperation(input: OperationInput, templatePath: string): Record<string, unknown> {
  const operation: Record<string, unknown> = {};
  const parameters = parametersOf(input, templatePath);
  if (parameters.length > 0) operation.parameters = parameters;
  if (input.body !== undefined) {
    operation.requestBody = { required: true, content: { 'application/json': { schema: input.body } } };
  }
  return operation;
}

function okResponse(input: OperationInput, paid: boolean): Record<string, unknown> {
  const response: Record<string, unknown> = {
    description: 'The resource.',
    content: { [input.mimeType]: { schema: input.output ?? {} } },
  };
  if (paid) {
    response.headers = {
      'PAYMENT-RESPONSE': {
        description: 'Base64-encoded JSON settlement receipt (x402 v2 SettleResponse).',
        schema: { type: 'string' },
      },
    };
  }
  return response;
}

function paidOperation(facts: RouteFacts, facilitatorUrl: string | undefined): Record<string, unknown> {
  const input: OperationInput = {
    pathParams: facts.pathParams,
    queryParams: facts.queryParams,
    body: facts.body,
    mimeType: facts.mimeType,
    output: facts.output,
  };
  const availability = facts.availability;
  const operation: Record<string, unknown> = {
    operationId: facts.operationId ?? operationIdFor(facts.method, facts.templatePath),
    summary: facts.description || facts.route.key,
    ...(facts.category ? { tags: [facts.category] } : {}),
    ...baseOperation(input, facts.templatePath),
    security: [{ x402: [] }],
    responses: {
      '200': okResponse(input, true),
      '400': { $ref: '#/components/responses/BadRequest' },
      '402': { $ref: '#/components/responses/PaymentRequired' },
      ...(availability === 'retired' ? { '410': { $ref: '#/components/responses/Gone' } } : {}),
      '502': { $ref: '#/components/responses/SettlementUncertain' },
      '503': { $ref: '#/components/responses/Unavailable' },
    },
    'x-payment-info': {
      protocol: 'x402',
      x402Version: 2,
      availability,
      ...(facts.priceUsd !== undefined ? { priceUsd: facts.priceUsd } : {}),
      ...(facilitatorUrl !== undefined ? { facilitatorUrl } : {}),
      accepts: facts.route.requirements.map((r) => ({ ...r })),
      ...paymentIdentifierInfo(facts.route.config.paymentIdentifier),
    },
  };
  if (availability === 'retired') operation.deprecated = true;
  return operation;
}

/** An idempotency key a client may (or must) send (docs/payment-identifier.md), as the route says. */
function paymentIdentifierInfo(option: RouteConfig['paymentIdentifier']): {
  paymentIdentifier?: { required: boolean };
} {
  if (!option) return {};
  return { paymentIdentifier: { required: option !== true && option.required === true } };
}

function freeOperation(route: FreeRoute, templatePath: string): Record<string, unknown> {
  const convert = (schema: unknown) => (schema === undefined ? undefined : toJsonSchema(schema, 'input'));
  const input: OperationInput = {
    pathParams: convert(route.input?.pathParams),
    queryParams: convert(route.input?.queryParams),
    body: convert(route.input?.body),
    mimeType: route.mimeType ?? 'application/json',
    output: route.output === undefined ? undefined : toJsonSchema(route.output, 'output'),
  };
  const responses: Record<string, unknown> = { '200': okResponse(input, false) };
  for (const status of route.errorStatuses ?? []) {
    responses[String(status)] = {
      description: `Error (${status}).`,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }
  return {
    operationId: route.operationId ?? operationIdFor(route.method, templatePath),
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    ...(route.tags ? { tags: route.tags } : {}),
    ...baseOperation(input, templatePath),
    security: [],
    responses,
  };
}

function errorResponse(description: string): Record<string, unknown> {
  return { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
}

/**
 * Builds the OpenAPI 3.1.0 document of a table: every concrete paid route (paused ones too,
 * since they exist and answer 503; retired ones marked deprecated), with path, query and body
 * parameters and the 200 body from its zod schemas, its payment terms in `x-payment-info`, and
 * 400 / 402 / 502 / 503 responses; plus the given free routes. Price patterns are listed in the
 * top-level `x-x402-price-patterns`.
 *
 * @throws TollboothError `invalid_config` for two operations on one method and path, or a
 *   duplicate operationId.
 */
export function buildOpenApiDocument(
  table: DiscoverableTable,
  options: OpenApiOptions & { baseUrl: string },
): OpenApiDocument {
  table = currentTable(table);
  const factsOptions = { baseUrl: options.baseUrl, usdAssets: options.usdAssets };
  const paths: Record<string, Record<string, unknown>> = {};
  const problems: string[] = [];
  const operationIds = new Set<string>();
  const add = (templatePath: string, method: string, operation: Record<string, unknown>) => {
    const verb = method === '*' ? 'get' : method.toLowerCase();
    if (!HTTP_METHODS.has(verb)) {
      problems.push(`${method} ${templatePath}: not an HTTP method OpenAPI can describe`);
      return;
    }
    const item = paths[templatePath] ?? {};
    if (item[verb]) problems.push(`${method} ${templatePath}: described twice`);
    const id = operation.operationId as string;
    if (operationIds.has(id)) problems.push(`${method} ${templatePath}: operationId ${id} is used twice`);
    operationIds.add(id);
    item[verb] = operation;
    paths[templatePath] = item;
  };

  const ordered = routesInOrder(table);
  for (const route of ordered) {
    if (route.isPattern) continue;
    const facts = routeFacts(route, factsOptions);
    add(facts.templatePath, facts.method, paidOperation(facts, options.facilitatorUrl));
  }
  for (const route of options.freeRoutes ?? []) {
    const templatePath = toTemplatePath(route.path);
    add(templatePath, route.method.toUpperCase(), freeOperation(route, templatePath));
  }
  if (problems.length > 0) {
    throw new TollboothError('invalid_config', `OpenAPI document: ${problems.join('; ')}`);
  }

  const patterns = ordered
    .filter((route) => route.isPattern && availabilityOf(route) !== 'retired')
    .map((route) => {
      const facts = routeFacts(route, factsOptions);
      return {
        pattern: route.path,
        method: facts.method,
        ...(facts.priceUsd !== undefined ? { priceUsd: facts.priceUsd } : {}),
        description: facts.description,
        availability: facts.availability,
      };
    });

  const info: OpenApiDocument['info'] = {
    title: options.title ?? OPENAPI_DEFAULTS.title,
    version: options.version ?? OPENAPI_DEFAULTS.version,
  };
  if (options.description) info.description = options.description;
  const document: OpenApiDocument = {
    openapi: OPENAPI_DEFAULTS.openapi,
    info,
    servers: [{ url: options.baseUrl }],
    paths,
    components: {
      schemas: {
        PaymentRequired: toJsonSchema(PaymentRequired, 'input'),
        Error: toJsonSchema(ErrorBodySchema, 'output'),
      },
      responses: {
        BadRequest: errorResponse(
          'The request is not the canonical request of the resource, or is malformed.',
        ),
        PaymentRequired: {
          description:
            'Payment required or rejected. The challenge is in the PAYMENT-REQUIRED header (base64 JSON) and in the body; a rejected payment may answer with an Error body instead.',
          headers: {
            'PAYMENT-REQUIRED': {
              description: 'Base64-encoded JSON PaymentRequired (x402 v2).',
              schema: { type: 'string' },
            },
          },
          content: {
            'application/json': {
              schema: {
                oneOf: [
                  { $ref: '#/components/schemas/PaymentRequired' },
                  { $ref: '#/components/schemas/Error' },
                ],
              },
            },
          },
        },
        Gone: errorResponse('The resource is retired.'),
        SettlementUncertain: errorResponse(
          'Settlement outcome uncertain: retry only the exact same payment payload (error.retry.instruction).',
        ),
        Unavailable: errorResponse(
          'The resource is paused (no payment challenge; see Retry-After) or a dependency is unavailable.',
        ),
      },
      securitySchemes: {
        x402: {
          type: 'apiKey',
          in: 'header',
          name: 'PAYMENT-SIGNATURE',
          description:
            'x402 v2 payment: base64-encoded JSON PaymentPayload. The legacy X-PAYMENT header is also accepted.',
        },
      },
    },
  };
  if (patterns.length > 0) document['x-x402-price-patterns'] = patterns;
  return document;
}

/**
 * The OpenAPI 3.1.0 description of a table, built once and rebuilt when a route's price or
 * availability changes.
 *
 * @throws TollboothError `invalid_config` for a missing base URL.
 * @example
 * const openapi = createOpenApiDocument({ table, title: 'Bitcoin fees', freeRoutes: [preview] });
 * openapi.document().paths['/api/v1/fees/now'];
 */
export function createOpenApiDocument(options: OpenApiOptions): OpenApiSource {
  const baseUrl = resolveBaseUrl('createOpenApiDocument', options.table, options.baseUrl);
  const memo = memoByTable(options.table, (table) => buildOpenApiDocument(table, { ...options, baseUrl }));
  return { document: () => memo.get(), invalidate: () => memo.invalidate() };
}
