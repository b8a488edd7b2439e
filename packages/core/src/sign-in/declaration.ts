import type { SignInPolicy } from './types';

/** The JSON Schema of a proof, as the official extension declares it (the 402 body carries it). */
export const SIGN_IN_PROOF_JSON_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    domain: { type: 'string' },
    address: { type: 'string' },
    statement: { type: 'string' },
    uri: { type: 'string', format: 'uri' },
    version: { type: 'string' },
    chainId: { type: 'string' },
    type: { type: 'string' },
    nonce: { type: 'string' },
    issuedAt: { type: 'string', format: 'date-time' },
    expirationTime: { type: 'string', format: 'date-time' },
    notBefore: { type: 'string', format: 'date-time' },
    requestId: { type: 'string' },
    resources: { type: 'array', items: { type: 'string', format: 'uri' } },
    signature: { type: 'string' },
  },
  required: ['domain', 'address', 'uri', 'version', 'chainId', 'type', 'nonce', 'issuedAt', 'signature'],
} as const;

export interface SignInDeclarationInput {
  /** `host[:port]` of the configured public URL. */
  domain: string;
  /** The resource URL the message names (built from the configured public URL, never `Host`). */
  uri: string;
  nonce: string;
  issuedAt: number;
  expiresAt: number;
  policy: SignInPolicy;
  /** `{chainId, type}` of every network a proof may be signed on. */
  supportedChains: ReadonlyArray<{ chainId: string; type: string }>;
}

/**
 * The `sign-in-with-x` extension of a challenge: `info` (what the client signs), the chains it may
 * sign on, and (in the body only) the proof's JSON Schema. The header form leaves the schema out:
 * the official client reads `info` and `supportedChains`, and the head stays small.
 */
export function declareSignIn(input: SignInDeclarationInput): { body: unknown; header: unknown } {
  const info: Record<string, unknown> = {
    domain: input.domain,
    uri: input.uri,
    version: '1',
    nonce: input.nonce,
    issuedAt: new Date(input.issuedAt).toISOString(),
    expirationTime: new Date(input.expiresAt).toISOString(),
  };
  if (input.policy.statement) info['statement'] = input.policy.statement;
  info['resources'] = [input.uri];
  const header = { info, supportedChains: input.supportedChains };
  return { header, body: { ...header, schema: SIGN_IN_PROOF_JSON_SCHEMA } };
}
