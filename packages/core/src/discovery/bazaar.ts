import type * as z from 'zod';
import type { RoutesConfig } from '../routes/types';
import { exampleOf, type JsonSchema, objectMembers } from './json-schema';
import { type DiscoverableRoute, pathParamNames, routeFacts } from './route-view';

/** Methods whose input travels in the body, as the bazaar extension distinguishes them. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

const JSON_SCHEMA_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/** `info.input` of the bazaar extension: example values of each request part. */
export interface BazaarInput {
  type: 'http';
  method: string;
  queryParams?: Record<string, unknown>;
  pathParams?: Record<string, unknown>;
  bodyType?: 'json';
  body?: unknown;
}

/**
 * The `bazaar` extension of a challenge (`PaymentRequired.extensions.bazaar`): `info` says how
 * to call the resource, `schema` is a JSON Schema (draft 2020-12) that `info` satisfies, which
 * facilitators check before cataloguing. `routeTemplate` (`/tx/:txid`) is present for routes with
 * path parameters, so a catalog lists the route once rather than once per parameter value.
 */
export interface BazaarExtension {
  info: {
    input: BazaarInput;
    output: { type: 'json'; example?: unknown };
  };
  schema: JsonSchema;
  routeTemplate?: string;
}

export interface BazaarExtensionOptions {
  /**
   * Actual path parameter values of the request being challenged. Default: example values
   * (from `.meta({ examples })`, defaults, or made up from the type).
   */
  pathParams?: Record<string, string>;
  /** The request's method, for a route declared for any method (`*`). */
  method?: string;
}

/**
 * Example object for an object schema: members with an explicit example or default, and every
 * required member that an example can be made up for. Returns the example and the names of
 * required members it had to leave out.
 */
function exampleObject(
  json: JsonSchema,
  zodSchema: unknown,
): { value: Record<string, unknown>; missing: string[] } {
  const { properties, required } = objectMembers(json);
  const value: Record<string, unknown> = {};
  const missing: string[] = [];
  for (const [name, member] of Object.entries(properties)) {
    const explicit =
      (Array.isArray(member.examples) && member.examples.length > 0) ||
      'default' in member ||
      'const' in member;
    if (!explicit && !required.includes(name)) continue;
    const example = exampleOf(member);
    if (example === undefined) missing.push(name);
    else value[name] = example;
  }
  // A made-up value may still break a constraint the JSON Schema does not spell out (or a
  // refinement): ask the zod schema, and leave out the members it rejects.
  const parser = zodSchema as
    | { safeParse?: (v: unknown) => { success: boolean; error?: z.ZodError } }
    | undefined;
  if (parser && typeof parser.safeParse === 'function') {
    const result = parser.safeParse(value);
    if (!result.success) {
      for (const issue of result.error?.issues ?? []) {
        const name = issue.path[0];
        if (typeof name === 'string' && name in value) {
          delete value[name];
          if (required.includes(name)) missing.push(name);
        }
      }
    }
  }
  return { value, missing };
}

/** An object schema without the given names in `required`. */
function withoutRequired(json: JsonSchema, names: string[]): JsonSchema {
  if (names.length === 0) return { ...json, type: 'object' };
  const required = objectMembers(json).required.filter((name) => !names.includes(name));
  const { required: _r, ...rest } = json;
  return required.length > 0 ? { ...rest, type: 'object', required } : { ...rest, type: 'object' };
}

/**
 * The `bazaar` discovery extension of a paid route, derived from the same zod schemas as the
 * catalog and the OpenAPI document. It has the shape the official `@x402/extensions` server
 * produces after enrichment (`method` fixed, `routeTemplate` for path parameters), so the official
 * `extractDiscoveryInfo` accepts it from the payment payload that echoes it.
 *
 * Request parts become example values in `info.input` (a required parameter that no example can
 * be made up for is left out of `info` and of the schema's `required`, but stays described);
 * the 200 body schema is `schema.properties.output.properties.example`.
 *
 * @example
 * const bazaar = createBazaarExtension(route);
 * paymentRequired.extensions = { ...paymentRequired.extensions, bazaar };
 */
export function createBazaarExtension(
  route: DiscoverableRoute,
  options: BazaarExtensionOptions = {},
): BazaarExtension {
  // The base URL only shapes `resource`, which the extension does not carry.
  const facts = routeFacts(route, { baseUrl: 'http://localhost' });
  const declared = facts.method === '*' ? (options.method ?? 'GET') : facts.method;
  const method = declared.toUpperCase();
  const inputInfo = route.config.discovery?.input ?? {};

  const input: BazaarInput = { type: 'http', method };
  const inputSchema: Record<string, JsonSchema> = {
    type: { type: 'string', const: 'http' },
    method: { type: 'string', enum: [method] },
  };
  const requiredInput = ['type', 'method'];

  if (facts.queryParams) {
    const { value, missing } = exampleObject(facts.queryParams, inputInfo.queryParams);
    input.queryParams = value;
    inputSchema.queryParams = withoutRequired(facts.queryParams, missing);
  }
  if (facts.pathParams) {
    if (options.pathParams) {
      input.pathParams = { ...options.pathParams };
      inputSchema.pathParams = { ...facts.pathParams, type: 'object' };
    } else {
      const { value, missing } = exampleObject(facts.pathParams, inputInfo.pathParams);
      input.pathParams = value;
      inputSchema.pathParams = withoutRequired(facts.pathParams, missing);
    }
  }
  if (BODY_METHODS.has(method)) {
    const bodySchema = facts.body ?? { type: 'object' };
    input.bodyType = 'json';
    inputSchema.bodyType = { type: 'string', enum: ['json', 'form-data', 'text'] };
    requiredInput.push('bodyType', 'body');
    if (bodySchema.type === 'object') {
      const { value, missing } = exampleObject(bodySchema, inputInfo.body);
      input.body = value;
      inputSchema.body = withoutRequired(bodySchema, missing);
    } else {
      const example = exampleOf(bodySchema);
      input.body = example ?? {};
      inputSchema.body = example === undefined ? {} : bodySchema;
    }
  }

  const output: BazaarExtension['info']['output'] = { type: 'json' };
  const outputSchema: Record<string, JsonSchema> = { type: { type: 'string' } };
  if (facts.output) {
    outputSchema.example = facts.output;
    if (Array.isArray(facts.output.examples) && facts.output.examples.length > 0) {
      output.example = facts.output.examples[0];
    }
  }

  const extension: BazaarExtension = {
    info: { input, output },
    schema: {
      $schema: JSON_SCHEMA_2020_12,
      type: 'object',
      properties: {
        input: {
          type: 'object',
          properties: inputSchema,
          required: requiredInput,
          additionalProperties: false,
        },
        output: { type: 'object', properties: outputSchema, required: ['type'] },
      },
      required: ['input'],
    },
  };
  if (pathParamNames(route.path).length > 0) extension.routeTemplate = route.path;
  return extension;
}

/**
 * The header form of a bazaar extension: `info.input` whole and its schema without the `pattern`
 * of a string that names its `format` (zod spells `date-time` as a regular expression of hundreds
 * of characters; the format says the same), the output reduced to `{ type }` (no example, no body
 * schema). A 200 body schema easily weighs kilobytes and a response head must stay under the
 * 4–8 KB that proxies accept; clients echo what the header carries in their payment, which must
 * stay under 4 KB too (docs/production.md#the-size-of-a-payment), and this form still validates
 * against its own schema, so a facilitator catalogues the resource from it. The whole extension
 * stays in the 402 body, the catalog and OpenAPI.
 *
 * @example
 * const bazaar = createBazaarExtension(route);
 * const config = { ...route.config, extensions: { bazaar }, headerExtensions: { bazaar: toHeaderBazaarExtension(bazaar) } };
 */
export function toHeaderBazaarExtension(extension: BazaarExtension): BazaarExtension {
  const properties = (extension.schema.properties ?? {}) as Record<string, JsonSchema>;
  const compact: BazaarExtension = {
    info: { input: extension.info.input, output: { type: extension.info.output.type } },
    schema: {
      ...extension.schema,
      properties: {
        ...properties,
        ...(properties['input'] === undefined
          ? {}
          : { input: withoutFormatPatterns(properties['input']) as JsonSchema }),
        output: { type: 'object', properties: { type: { type: 'string' } }, required: ['type'] },
      },
    },
  };
  if (extension.routeTemplate !== undefined) compact.routeTemplate = extension.routeTemplate;
  return compact;
}

/** A copy of a JSON schema without the `pattern` of any node that also names a `format`. */
function withoutFormatPatterns(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutFormatPatterns);
  if (value === null || typeof value !== 'object') return value;
  const node = value as Record<string, unknown>;
  const formatted = typeof node['format'] === 'string';
  const out: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(node)) {
    if (key !== 'pattern' || !formatted) out[key] = withoutFormatPatterns(member);
  }
  return out;
}

const ROUTE_KEY = /^(?:([A-Za-z]+|\*)\s+)?(\/\S*)$/;

/**
 * Returns a copy of a routes config in which every concrete route (no `*`) carries its `bazaar`
 * extension: whole in `extensions` (the 402 body), in its header form ({@link
 * toHeaderBazaarExtension}) in `headerExtensions` (the `PAYMENT-REQUIRED` header, which clients
 * read and echo to the facilitator). Price patterns and routes that already declare a `bazaar`
 * extension are left as they are. Path parameters carry example values; `routeTemplate` lets a
 * facilitator catalogue the route once.
 *
 * @example
 * const gate = createPaymentGate({ routes: addBazaarExtensions(routes), schemes, facilitator });
 */
export function addBazaarExtensions(routes: RoutesConfig): RoutesConfig {
  const out: RoutesConfig = {};
  for (const [key, config] of Object.entries(routes)) {
    const parsed = ROUTE_KEY.exec(key.trim());
    if (
      !parsed ||
      !config ||
      typeof config !== 'object' ||
      parsed[2]!.includes('*') ||
      // A tool route's bazaar entry describes a tool call, not a request (`@tollbooth/mcp`).
      parsed[1]?.toUpperCase() === 'TOOL' ||
      config.extensions?.bazaar
    ) {
      out[key] = config;
      continue;
    }
    const route: DiscoverableRoute = {
      key,
      method: (parsed[1] ?? '*').toUpperCase(),
      path: parsed[2]!,
      isPattern: false,
      config,
      requirements: [],
    };
    const bazaar = createBazaarExtension(route);
    out[key] = {
      ...config,
      extensions: { ...config.extensions, bazaar },
      headerExtensions: { ...config.headerExtensions, bazaar: toHeaderBazaarExtension(bazaar) },
    };
  }
  return out;
}
