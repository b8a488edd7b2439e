import type { ErrorCode } from '../errors/codes';
import type { CompiledSignIn } from './compile-sign-in';
import type { SignInProof } from './proof';
import { SIGN_IN_DEFAULTS } from './types';

/** A proof that holds: who signed it, on which network, and until when its nonce must stay claimed. */
export interface CheckedProof {
  ok: true;
  network: string;
  signer: string;
  /** Epoch ms after which no proof with this nonce can be accepted (the nonce claim's expiry). */
  nonceExpiresAt: number;
}

export type ProofRefusal = { ok: false; code: ErrorCode; message: string };

/**
 * Checks a sign-in proof against the route's configuration, cheapest first: the configured domain
 * and origin (never `Host`), a chain the route offers, a nonce this server issued for this route
 * and still young, the message's own time window, then the signature (which may ask the chain).
 * Nothing is claimed or used here.
 *
 * @throws what the scheme's verifier throws when it cannot judge the signature.
 */
export async function checkProof(
  signIn: CompiledSignIn,
  routeKey: string,
  proof: SignInProof,
): Promise<CheckedProof | ProofRefusal> {
  const refuse = (code: ErrorCode, message: string): ProofRefusal => ({ ok: false, code, message });
  if (proof.domain !== signIn.domain)
    return refuse('sign_in_domain_mismatch', `domain must be ${signIn.domain}, not ${proof.domain}`);
  if (!URL.canParse(proof.uri) || new URL(proof.uri).origin !== signIn.origin)
    return refuse('sign_in_uri_mismatch', `uri must be on ${signIn.origin}`);
  const chain = signIn.chains.get(proof.chainId);
  if (!chain || chain.type !== proof.type) {
    const offered = [...signIn.chains].map(([id, c]) => `${id} (${c.type})`).join(', ');
    return refuse('sign_in_chain_unsupported', `sign-in is offered on ${offered}`);
  }
  const issuedAt = signIn.nonces.check(proof.nonce, routeKey);
  if (issuedAt === undefined)
    return refuse('sign_in_nonce_unknown', 'the nonce was not issued by this server for this route');
  const now = signIn.now();
  if (issuedAt > now + SIGN_IN_DEFAULTS.clockSkewMs)
    return refuse('sign_in_not_yet_valid', 'the nonce was issued in the future');
  if (now - issuedAt > signIn.maxAgeMs)
    return refuse('sign_in_expired', `the nonce is older than ${signIn.maxAgeMs / 1000} s`);
  if (proof.expirationTime !== undefined && !(now < Date.parse(proof.expirationTime)))
    return refuse('sign_in_expired', 'the message expired (expirationTime)');
  if (proof.notBefore !== undefined && now < Date.parse(proof.notBefore))
    return refuse('sign_in_not_yet_valid', 'the message is not valid yet (notBefore)');
  // A verifier that throws could not judge (a chain reader down): the gate fails closed with 503.
  const verdict = await chain.signIn.verify(proof);
  if (!verdict.ok) return refuse('sign_in_signature_invalid', verdict.message);
  return {
    ok: true,
    network: proof.chainId,
    signer: verdict.signer,
    nonceExpiresAt: issuedAt + signIn.maxAgeMs + SIGN_IN_DEFAULTS.clockSkewMs,
  };
}
