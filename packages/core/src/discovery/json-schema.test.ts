import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { exampleOf, parameterDescriptors, toJsonSchema } from './json-schema';

describe('toJsonSchema', () => {
  it('converts request parts on the input side, so coerced and defaulted parameters read as sent', () => {
    const schema = z.object({
      n: z.coerce.number().describe('a number'),
      mode: z.enum(['a', 'b']).default('a'),
    });
    expect(toJsonSchema(schema, 'input')).toEqual({
      type: 'object',
      properties: {
        n: { type: 'number', description: 'a number' },
        mode: { type: 'string', enum: ['a', 'b'], default: 'a' },
      },
      required: ['n'],
    });
  });

  it('inlines a schema registered with an id instead of referencing $defs', () => {
    const Address = z
      .object({ street: z.string() })
      .meta({ id: 'DiscoveryTestAddress', description: 'where' });
    const json = toJsonSchema(z.object({ home: Address, work: Address }), 'output');
    expect(JSON.stringify(json)).not.toContain('$ref');
    expect(json.properties).toEqual({
      home: expect.objectContaining({ type: 'object', description: 'where' }),
      work: expect.objectContaining({ type: 'object', description: 'where' }),
    });
  });

  it('rejects a recursive schema with a configuration error', () => {
    const Node: z.ZodType = z.lazy(() => z.object({ children: z.array(Node) }));
    expect(() => toJsonSchema(Node, 'output')).toThrow(/recursive/);
  });

  it('takes a JSON Schema object as it is, minus $schema', () => {
    expect(toJsonSchema({ $schema: 'x', type: 'string' }, 'input')).toEqual({ type: 'string' });
  });

  it('rejects something that is no schema', () => {
    expect(() => toJsonSchema('string', 'input')).toThrow(/zod schema or a JSON Schema/);
  });
});

describe('parameterDescriptors', () => {
  it('describes each member with its type, description and required flag', () => {
    const json = toJsonSchema(
      z.object({
        q: z.string().describe('question'),
        n: z.number().int().optional(),
        maybe: z.string().nullable().optional().describe('nullable'),
      }),
      'input',
    );
    expect(parameterDescriptors(json)).toEqual({
      q: { type: 'string', description: 'question', required: true },
      n: { type: 'integer', description: 'n', required: false },
      maybe: { type: 'string', description: 'nullable', required: false },
    });
  });
});

describe('exampleOf', () => {
  it.each([
    [{ type: 'string', examples: ['e'], default: 'd' }, 'e'],
    [{ type: 'string', default: 'd' }, 'd'],
    [{ const: 5 }, 5],
    [{ enum: ['x', 'y'] }, 'x'],
    [{ type: 'string', minLength: 3 }, 'xxx'],
    [{ type: 'integer', minimum: 7 }, 7],
    [{ type: 'boolean' }, true],
    [{ type: 'string', format: 'date-time' }, '2026-01-01T00:00:00Z'],
    [{ type: 'string', pattern: '^[0-9a-f]{64}$' }, undefined],
    [{ anyOf: [{ type: 'null' }, { type: 'number' }] }, 1],
  ])('gives %j the example %j', (schema, example) => {
    expect(exampleOf(schema)).toEqual(example);
  });
});
