import { rememberBodyText } from '../http/known-text';
import type { PaymentRequirements, PaymentRequirementsV1 } from '../protocol/schemas';

/** A precomputed 402 challenge: the object, its header value and its body bytes. */
export interface Challenge {
  /** The PaymentRequired (v2) or v1 402 body object. Treat as read-only. */
  object: Readonly<Record<string, unknown>>;
  /**
   * `PAYMENT-REQUIRED` header value (standard base64 of the JSON); absent for a v1 route. The same
   * PaymentRequired as the body, except for the extensions a route lightens for the header
   * (`headerExtensions`).
   */
  header?: string;
  /** The JSON body bytes. */
  body: Uint8Array;
}

export interface BuildChallengeInput {
  x402Version: 1 | 2;
  /** The resource URL of the request. */
  resource: string;
  /** The code in the challenge's `error` field. */
  error: string;
  description: string;
  mimeType: string;
  requirements: readonly PaymentRequirements[];
  requirementsV1(resource: string): PaymentRequirementsV1[];
  extensions?: Record<string, unknown> | undefined;
  /** Header forms of some extensions, by name, over `extensions`. */
  headerExtensions?: Record<string, unknown> | undefined;
}

const hasKeys = (value: Record<string, unknown> | undefined): value is Record<string, unknown> =>
  value !== undefined && Object.keys(value).length > 0;

/**
 * Builds a route's 402 challenge for one resource URL. The body carries the extensions whole
 * (discovery clients read it); the header carries each extension in its header form where the
 * route gives one, so that the response head stays small enough for proxies.
 */
export function buildChallenge(input: BuildChallengeInput): Challenge {
  if (input.x402Version === 1) {
    const object = { x402Version: 1, error: input.error, accepts: input.requirementsV1(input.resource) };
    return { object, body: bodyOf(JSON.stringify(object)) };
  }
  const info: Record<string, string> = { url: input.resource };
  if (input.description) info['description'] = input.description;
  info['mimeType'] = input.mimeType;
  const object: Record<string, unknown> = {
    x402Version: 2,
    error: input.error,
    resource: info,
    accepts: input.requirements,
  };
  if (hasKeys(input.extensions)) object['extensions'] = input.extensions;
  const json = JSON.stringify(object);
  let headerJson = json;
  if (hasKeys(input.headerExtensions)) {
    headerJson = JSON.stringify({
      ...object,
      extensions: { ...input.extensions, ...input.headerExtensions },
    });
  }
  return {
    object,
    header: Buffer.from(headerJson, 'utf8').toString('base64'),
    body: bodyOf(json),
  };
}

/** The body bytes of a challenge, its text remembered for the adapters (cached challenges are sent many times). */
function bodyOf(json: string): Buffer {
  const body = Buffer.from(json, 'utf8');
  rememberBodyText(body, json);
  return body;
}
