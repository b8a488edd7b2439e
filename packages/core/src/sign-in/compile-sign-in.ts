import type { PaymentRequirements } from '../protocol/schemas';
import { declareSignIn } from './declaration';
import { createNonceIssuer, type NonceIssuer } from './nonce';
import { type SchemeSignIn, SIGN_IN_DEFAULTS, type SignInOptions, type SignInPolicy } from './types';

/** A sign-in route's compiled side: its policy, the configured origin, its chains and nonces. */
export interface CompiledSignIn {
  readonly policy: Readonly<SignInPolicy>;
  /** `host[:port]` of the configured public URL: a proof's `domain` must be exactly this. */
  readonly domain: string;
  /** Origin of the configured public URL: a proof's `uri` must have exactly this origin. */
  readonly origin: string;
  readonly maxAgeMs: number;
  readonly now: () => number;
  readonly nonces: NonceIssuer;
  /** The networks a proof may be signed on, with their signature type and the scheme that checks them. */
  readonly chains: ReadonlyMap<string, { type: string; signIn: SchemeSignIn }>;
  /** A fresh declaration of the extension for a resource URL (a new nonce each time). */
  declare(resourceUrl: string): { body: unknown; header: unknown };
}

/**
 * What sign-in needs of a scheme: its name, its networks and its sign-in side. A `SchemeServer` is
 * one (sign-in sits below the scheme interface, which names `SchemeSignIn`).
 */
export interface SignInScheme {
  readonly scheme: string;
  supportsNetwork(network: string): boolean;
  readonly signIn?: SchemeSignIn | undefined;
}

export interface CompileSignInInput {
  at: string;
  routeKey: string;
  policy: unknown;
  options: SignInOptions | undefined;
  /** The issuer of every sign-in route of one table (one secret). */
  nonces: NonceIssuer | undefined;
  baseUrl: string | undefined;
  /** The route's fixed resource URL, if it has one. */
  resource: string | undefined;
  x402Version: 1 | 2;
  tool: boolean;
  requirements: readonly PaymentRequirements[];
  schemes: readonly SignInScheme[];
  problems: string[];
}

/** Checks the gate's `signIn` options; the nonce issuer when they hold. */
export function compileSignInOptions(
  options: SignInOptions | undefined,
  problems: string[],
): NonceIssuer | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== 'object' || options === null) {
    problems.push('signIn must be { secret, proofMaxAgeSeconds? }');
    return undefined;
  }
  const max = options.proofMaxAgeSeconds;
  if (max !== undefined && (!Number.isInteger(max) || max <= 0))
    problems.push('signIn.proofMaxAgeSeconds must be a positive integer');
  if (typeof options.secret !== 'string' || options.secret.length < SIGN_IN_DEFAULTS.minSecretLength) {
    problems.push(
      `signIn.secret must be a string of at least ${SIGN_IN_DEFAULTS.minSecretLength} characters (the same on every instance)`,
    );
    return undefined;
  }
  return createNonceIssuer(options.secret);
}

/** A route's `signIn` option, checked and compiled; `undefined` when the route has none or it is wrong. */
export function compileSignIn(input: CompileSignInInput): CompiledSignIn | undefined {
  const { at, policy, problems } = input;
  if (policy === undefined) return undefined;
  const before = problems.length;
  if (typeof policy !== 'object' || policy === null || Array.isArray(policy)) {
    problems.push(`${at}: signIn must be { passSeconds?, uses?, statement? }`);
    return undefined;
  }
  const { passSeconds, uses, statement } = policy as SignInPolicy;
  if (passSeconds === undefined && uses === undefined)
    problems.push(`${at}: signIn needs passSeconds, uses or both (what one payment buys)`);
  if (passSeconds !== undefined && (!Number.isInteger(passSeconds) || passSeconds <= 0))
    problems.push(`${at}: signIn.passSeconds must be a positive integer`);
  if (uses !== undefined && (!Number.isInteger(uses) || uses <= 0))
    problems.push(`${at}: signIn.uses must be a positive integer`);
  if (statement !== undefined && (typeof statement !== 'string' || /[\r\n]/.test(statement)))
    problems.push(`${at}: signIn.statement must be one line of text`);
  if (input.tool) problems.push(`${at}: sign-in is an HTTP extension; a tool route cannot have it`);
  if (input.x402Version !== 2) problems.push(`${at}: sign-in is an x402 v2 extension (x402Version is 1)`);
  if (input.options === undefined)
    problems.push(`${at}: signIn needs the gate's signIn option (the secret that signs nonces)`);
  if (input.baseUrl === undefined)
    problems.push(`${at}: signIn needs the baseUrl option (the public URL a proof must name, never Host)`);
  const origin = input.baseUrl === undefined ? undefined : new URL(input.baseUrl);
  if (origin && input.resource !== undefined && new URL(input.resource).origin !== origin.origin)
    problems.push(`${at}: a sign-in route's resource must be on the baseUrl's origin ${origin.origin}`);
  const chains = new Map<string, { type: string; signIn: SchemeSignIn }>();
  for (const requirement of input.requirements) {
    const scheme = input.schemes.find(
      (s) => s.scheme === requirement.scheme && s.supportsNetwork(requirement.network),
    );
    const type = scheme?.signIn?.signatureType(requirement.network);
    if (scheme?.signIn && type !== undefined && !chains.has(requirement.network))
      chains.set(requirement.network, { type, signIn: scheme.signIn });
  }
  if (input.requirements.length > 0 && chains.size === 0)
    problems.push(`${at}: signIn needs a scheme that verifies sign-ins on one of the route's networks`);
  if (problems.length > before || !origin || !input.nonces || !input.options) return undefined;
  const nonces = input.nonces;
  const maxAgeMs = (input.options.proofMaxAgeSeconds ?? SIGN_IN_DEFAULTS.proofMaxAgeSeconds) * 1000;
  const now = input.options.now ?? Date.now;
  const supportedChains = [...chains].map(([chainId, { type }]) => ({ chainId, type }));
  const compiled: CompiledSignIn = {
    policy: { ...(policy as SignInPolicy) },
    domain: origin.host,
    origin: origin.origin,
    maxAgeMs,
    now,
    nonces,
    chains,
    declare(resourceUrl) {
      const issuedAt = now();
      return declareSignIn({
        domain: origin.host,
        uri: resourceUrl,
        nonce: nonces.issue(input.routeKey, issuedAt),
        issuedAt,
        expiresAt: issuedAt + maxAgeMs,
        policy: compiled.policy,
        supportedChains,
      });
    },
  };
  return compiled;
}
