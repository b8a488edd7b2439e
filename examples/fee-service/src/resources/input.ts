import type * as z from 'zod';
import { errorResult } from '../http/respond';
import type { RouteResult } from '../http/types';
import {
  type AnyResource,
  isPaid,
  type ResourceEnvironment,
  type ResourceInput,
  type ResourceRefusal,
} from './kit';

/** The request parts as received: decoded path parameters, the raw query, the body bytes. */
export interface RawInput {
  params: Readonly<Record<string, string>>;
  /** The query string without `?` (raw, percent-encoded). */
  query: string;
  /** The body, or undefined when the resource takes none (it is then not read). */
  body: Buffer | undefined;
}

export type InputOutcome =
  // biome-ignore lint/suspicious/noExplicitAny: the parsed shape is the resource's own
  { ok: true; input: ResourceInput<any> } | { ok: false; result: RouteResult };

/** Whether validating this resource's input needs the body read. */
export function takesBody(resource: AnyResource): boolean {
  return resource.input?.body !== undefined;
}

function describeIssues(part: string, error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => {
      const where = [part, ...issue.path.map(String)].join('.');
      return `${where}: ${issue.message}`;
    })
    .join('; ');
}

/** Query values by name; a name given twice is reported, since which one wins would be a guess. */
function queryValues(query: string): { values: Record<string, string>; repeated: string[] } {
  const values: Record<string, string> = {};
  const repeated: string[] = [];
  if (query === '') return { values, repeated };
  for (const [name, value] of new URLSearchParams(query)) {
    if (Object.hasOwn(values, name)) repeated.push(name);
    else values[name] = value;
  }
  return { values, repeated };
}

const invalid = (requestId: string, message: string): InputOutcome => ({
  ok: false,
  result: errorResult({ status: 400, code: 'invalid_request', requestId, retryable: false, message }),
});

/**
 * Validates a request against the resource's own schemas, then its `check`: path parameters,
 * query (a paid resource that declares none takes no query at all), JSON body. The first failing part answers 400
 * `invalid_request` (or the code `check` refuses with), which a paid route's precondition sends before any challenge.
 */
export function validateInput(
  resource: AnyResource,
  raw: RawInput,
  requestId: string,
  env: ResourceEnvironment,
): InputOutcome {
  const schemas = resource.input ?? {};
  let params: Record<string, unknown> = {};
  if (schemas.pathParams) {
    const parsed = schemas.pathParams.safeParse(raw.params);
    if (!parsed.success) return invalid(requestId, describeIssues('path', parsed.error));
    params = parsed.data;
  }

  const { values, repeated } = queryValues(raw.query);
  if (repeated.length > 0) {
    return invalid(requestId, `query: ${[...new Set(repeated)].join(', ')} given more than once`);
  }
  let query: Record<string, unknown> = {};
  if (schemas.queryParams) {
    const parsed = schemas.queryParams.safeParse(values);
    if (!parsed.success) return invalid(requestId, describeIssues('query', parsed.error));
    query = parsed.data;
  } else if (isPaid(resource) && Object.keys(values).length > 0) {
    // A free resource ignores a query it does not take (cache busters); nobody should sign for
    // parameters that mean nothing.
    return invalid(requestId, `query: ${resource.path} takes no query parameters`);
  }

  let body: Record<string, unknown> = {};
  if (schemas.body) {
    const text = raw.body?.toString('utf8') ?? '';
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return invalid(requestId, 'body: must be a JSON object (Content-Type: application/json)');
    }
    const parsed = schemas.body.safeParse(json);
    if (!parsed.success) return invalid(requestId, describeIssues('body', parsed.error));
    body = parsed.data;
  }

  const input = { params, query, body } as ResourceInput<Record<never, never>>;
  const refusal = resource.check?.(input, env);
  if (refusal) return { ok: false, result: refusalResult(resource, refusal, requestId) };
  return { ok: true, input };
}

/** The Error answer of a resource's refusal, with its declared status and `retryable`. */
export function refusalResult(
  resource: AnyResource,
  refusal: ResourceRefusal,
  requestId: string,
): RouteResult {
  const spec = resource.errors[refusal.code];
  return errorResult({
    status: spec?.status ?? 400,
    code: refusal.code,
    requestId,
    retryable: spec?.retryable ?? false,
    message: refusal.message,
  });
}

/**
 * The resource's `sellable` answer for a validated input, as the Error to send before any
 * challenge; undefined when there is something to sell (or the resource does not ask).
 */
export async function unsellable(
  resource: AnyResource,
  // biome-ignore lint/suspicious/noExplicitAny: the parsed shape is the resource's own
  input: ResourceInput<any>,
  env: ResourceEnvironment,
  requestId: string,
): Promise<RouteResult | undefined> {
  if (!resource.sellable) return undefined;
  const refusal = await resource.sellable(input, env.capabilities);
  return refusal ? refusalResult(resource, refusal, requestId) : undefined;
}
