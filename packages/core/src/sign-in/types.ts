import type { SignInProof } from './proof';

/**
 * What one payment for a route buys a payer who comes back by signing in (docs/sign-in-with-x.md):
 * a time pass, a number of uses, or both (whichever ends first). At least one is required.
 */
export interface SignInPolicy {
  /** The pass lasts this many seconds after the payment settled. */
  passSeconds?: number;
  /** The payment buys this many signed-in requests (the paid request itself not counted). */
  uses?: number;
  /** The statement of the sign-in message (EIP-4361), shown by wallets. Default none. */
  statement?: string;
}

/** The server side of sign-in, shared by every sign-in route (`PaymentGateOptions.signIn`). */
export interface SignInOptions {
  /**
   * The secret that signs the nonces this server issues (HMAC-SHA256), at least 32 characters;
   * every instance behind one public URL needs the same one. A proof whose nonce it did not sign is
   * refused without a storage lookup.
   */
  secret: string;
  /** How long a challenge's nonce can be signed and used, seconds. Default 300. */
  proofMaxAgeSeconds?: number;
  /** Epoch ms clock (tests). Default `Date.now` (the gate passes its own `now`). */
  now?: () => number;
}

export const SIGN_IN_DEFAULTS = {
  proofMaxAgeSeconds: 300,
  /** A nonce issued up to this far in the future (another instance's clock) is still accepted, ms. */
  clockSkewMs: 60_000,
  minSecretLength: 32,
} as const;

/** What a scheme says about a sign-in proof's signature. */
export type SignInVerdict = { ok: true; signer: string } | { ok: false; message: string };

/**
 * Sign-in on a scheme's networks (`SchemeServer.signIn`): the signature type a network's proofs
 * use, the one spelling of its addresses, and the signature check (EVM: EIP-4361 message, EOA by
 * ecrecover, EIP-1271/6492 smart wallets through the chain reader).
 */
export interface SchemeSignIn {
  /** The `type` of a network's sign-in proofs (EVM: `eip191`), or `undefined` when it has none. */
  signatureType(network: string): string | undefined;
  /** An address in its network's one spelling (EVM: EIP-55), or `undefined` when it is none. */
  canonicalAddress(address: string, network: string): string | undefined;
  /** Checks the proof's signature over its message; the signer in its one spelling. */
  verify(proof: SignInProof): Promise<SignInVerdict>;
}
