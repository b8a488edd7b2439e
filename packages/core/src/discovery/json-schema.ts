import * as z from 'zod';
import { TollboothError } from '../errors/tollbooth-error';

/** A JSON Schema (draft 2020-12) as a plain object. */
export type JsonSchema = Record<string, unknown>;

/** A documented request parameter, as the catalog shows it (`docs/discovery.md#the-catalog-listing`). */
export interface ParameterDescriptor {
  /** JSON Schema type name: `string`, `number`, `integer`, `boolean`, `array`, `object`. */
  type: string;
  description: string;
  required: boolean;
}

export type SchemaDirection = 'input' | 'output';

const cache = new WeakMap<object, Partial<Record<SchemaDirection, JsonSchema>>>();

/**
 * The global zod registry without `id`s: a schema registered with `.meta({ id })` would
 * otherwise be extracted to `$defs` and referenced, and a discovery schema must be self-contained.
 */
const metadataWithoutIds = {
  get(schema: z.core.$ZodType) {
    const meta = z.globalRegistry.get(schema);
    if (!meta || !('id' in meta)) return meta;
    const { id: _id, ...rest } = meta;
    return rest;
  },
} as unknown as z.core.$ZodRegistry<Record<string, unknown>>;

function isZodSchema(value: unknown): value is z.ZodType {
  return typeof value === 'object' && value !== null && '_zod' in value;
}

/**
 * Converts a route's schema to JSON Schema draft 2020-12, inlined (no `$defs`, no `$ref`, no
 * `$schema`), so it can be embedded anywhere: in a bazaar extension, an OpenAPI operation or a
 * catalog item.
 *
 * Accepts a zod 4 schema (converted with `z.toJSONSchema`; request parts use the **input** side,
 * so `z.coerce.number()` query parameters and defaults read as callers send them) or an already
 * written JSON Schema object, returned as given. The result is cached per schema object.
 *
 * @throws TollboothError `invalid_config` when the schema is neither, or cannot be represented.
 * @example
 * toJsonSchema(z.object({ q: z.string().describe('question') }), 'input')
 * // { type: 'object', properties: { q: { type: 'string', description: 'question' } }, required: ['q'] }
 */
export function toJsonSchema(schema: unknown, direction: SchemaDirection): JsonSchema {
  if (typeof schema !== 'object' || schema === null) {
    throw new TollboothError('invalid_config', `discovery: expected a zod schema or a JSON Schema object`);
  }
  const cached = cache.get(schema)?.[direction];
  if (cached) return cached;
  let json: JsonSchema;
  if (isZodSchema(schema)) {
    try {
      json = z.toJSONSchema(schema, {
        io: direction,
        target: 'draft-2020-12',
        reused: 'inline',
        cycles: 'throw',
        metadata: metadataWithoutIds,
        unrepresentable: 'any',
      }) as JsonSchema;
    } catch (cause) {
      throw new TollboothError(
        'invalid_config',
        `discovery: schema cannot be converted to JSON Schema (${(cause as Error).message}); recursive schemas are not supported, describe that part as z.unknown()`,
        { cause },
      );
    }
    json = stripSchemaKeys(json);
  } else {
    json = stripSchemaKeys(structuredClone(schema) as JsonSchema);
  }
  const entry = cache.get(schema) ?? {};
  entry[direction] = json;
  cache.set(schema, entry);
  return json;
}

/** Drops `$schema` and `$id` (embedded schemas must not carry them) and any `id` meta key. */
function stripSchemaKeys(json: JsonSchema): JsonSchema {
  const { $schema: _s, $id: _i, id: _id, ...rest } = json;
  if ('$defs' in rest || JSON.stringify(rest).includes('"$ref"')) {
    throw new TollboothError(
      'invalid_config',
      'discovery: a schema with $defs or $ref cannot be embedded in discovery documents; inline it',
    );
  }
  return rest;
}

/** Property schemas and required names of an object JSON Schema (empty for anything else). */
export function objectMembers(json: JsonSchema | undefined): {
  properties: Record<string, JsonSchema>;
  required: string[];
} {
  if (!json) return { properties: {}, required: [] };
  const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
  const required = Array.isArray(json.required) ? (json.required as string[]) : [];
  return { properties, required };
}

/** The JSON Schema type name of a property schema, looking through `anyOf` / `oneOf` unions. */
export function typeName(json: JsonSchema): string {
  const type = json.type;
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) return (type.find((t) => t !== 'null') as string | undefined) ?? 'null';
  if ('const' in json) return jsonTypeOf(json.const);
  if (Array.isArray(json.enum) && json.enum.length > 0) return jsonTypeOf(json.enum[0]);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const branches = json[key];
    if (Array.isArray(branches)) {
      for (const branch of branches as JsonSchema[]) {
        const name = typeName(branch);
        if (name !== 'null' && name !== 'unknown') return name;
      }
    }
  }
  return 'unknown';
}

function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/**
 * The parameters of an object schema as `{name: {type, description, required}}`, the descriptor
 * form of the catalog (`docs/discovery.md#the-catalog-listing`). A parameter without a description
 * gets its name.
 */
export function parameterDescriptors(json: JsonSchema | undefined): Record<string, ParameterDescriptor> {
  const { properties, required } = objectMembers(json);
  const out: Record<string, ParameterDescriptor> = {};
  for (const [name, property] of Object.entries(properties)) {
    out[name] = {
      type: typeName(property),
      description: typeof property.description === 'string' ? property.description : name,
      required: required.includes(name),
    };
  }
  return out;
}

/**
 * An example value for a JSON Schema: its first `examples` entry, else `default`, `const`,
 * the first `enum` member, else a plain value of its type (objects get their required members).
 * Returns `undefined` when nothing sensible can be made up.
 */
export function exampleOf(json: JsonSchema): unknown {
  if (Array.isArray(json.examples) && json.examples.length > 0) return json.examples[0];
  if ('default' in json) return json.default;
  if ('const' in json) return json.const;
  if (Array.isArray(json.enum) && json.enum.length > 0) return json.enum[0];
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = json[key];
    if (Array.isArray(branches)) {
      for (const branch of branches as JsonSchema[]) {
        if (branch.type === 'null') continue;
        const value = exampleOf(branch);
        if (value !== undefined) return value;
      }
    }
  }
  switch (typeName(json)) {
    case 'string':
      if (json.format === 'date-time') return '2026-01-01T00:00:00Z';
      if (json.format === 'uri' || json.format === 'url') return 'https://example.com';
      if (typeof json.pattern === 'string') return undefined;
      return 'x'.repeat(Math.max(1, Number(json.minLength ?? 1)));
    case 'integer':
    case 'number':
      return typeof json.minimum === 'number' ? json.minimum : 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'object': {
      const { properties, required } = objectMembers(json);
      const value: Record<string, unknown> = {};
      for (const name of required) {
        const member = properties[name];
        const example = member ? exampleOf(member) : undefined;
        if (example === undefined) return undefined;
        value[name] = example;
      }
      return value;
    }
    default:
      return undefined;
  }
}
