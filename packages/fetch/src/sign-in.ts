import { encodeHeader, type PaymentRequired, SIGN_IN_EXTENSION } from '@tollbooth/core';

/** What a challenge's sign-in offer asks a client to sign, completed with the chain it signs on. */
export interface SignInOffer {
  info: {
    domain: string;
    uri: string;
    version: string;
    nonce: string;
    issuedAt: string;
    statement?: string;
    expirationTime?: string;
    notBefore?: string;
    requestId?: string;
    resources?: string[];
  };
  chainId: string;
  type: string;
}

/**
 * The sign-in offer of a challenge a client may sign (docs/sign-in-with-x.md): declared, on the
 * network the client paid on, and bound to the origin it asked (its `domain` the request's host,
 * its `uri` on the request's origin), so a server cannot have it sign in to another site.
 */
export function signInOfferOf(
  paymentRequired: PaymentRequired,
  requestUrl: string,
  network: string,
): SignInOffer | undefined {
  const offer = paymentRequired.extensions?.[SIGN_IN_EXTENSION] as
    | { info?: SignInOffer['info']; supportedChains?: Array<{ chainId?: unknown; type?: unknown }> }
    | undefined;
  const info = offer?.info;
  if (!info || typeof info !== 'object' || !Array.isArray(offer.supportedChains)) return undefined;
  const chain = offer.supportedChains.find((c) => c?.chainId === network && typeof c.type === 'string');
  if (!chain) return undefined;
  const origin = new URL(requestUrl);
  if (info.domain !== origin.host || typeof info.uri !== 'string' || !URL.canParse(info.uri))
    return undefined;
  if (new URL(info.uri).origin !== origin.origin) return undefined;
  return { info, chainId: network, type: chain.type as string };
}

/** The `SIGN-IN-WITH-X` header of a signed offer: the offer's fields, the address, the signature. */
export function encodeSignInProof(offer: SignInOffer, address: string, signature: string): string {
  return encodeHeader({
    ...offer.info,
    address,
    chainId: offer.chainId,
    type: offer.type,
    signature,
  });
}

/**
 * The routes a client paid for (method and resource URL) and the network it paid on: where it
 * signs in before paying again. Kept in memory for the client's life.
 */
export class PaidRoutes {
  private readonly paid = new Map<string, string>();
  private key(method: string, resource: string): string {
    return `${method.toUpperCase()} ${resource}`;
  }
  remember(method: string, resource: string, network: string): void {
    this.paid.set(this.key(method, resource), network);
  }
  networkOf(method: string, resource: string): string | undefined {
    return this.paid.get(this.key(method, resource));
  }
  forget(method: string, resource: string): void {
    this.paid.delete(this.key(method, resource));
  }
}
