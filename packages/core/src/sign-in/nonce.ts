import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const NONCE = /^([0-9a-f]{16})([0-9a-f]{12})([0-9a-f]{32})$/;

/**
 * Sign-in nonces the server can recognise as its own without storing them: 8 random bytes, the
 * issue time (epoch ms) and an HMAC-SHA256 over both and the route key, under the server's
 * secret, all lower-case hex (an EIP-4361 nonce is alphanumeric). A nonce issued for one route is
 * not one of ours at another.
 */
export interface NonceIssuer {
  issue(route: string, at: number): string;
  /** The issue time of a nonce this server issued for `route`, or `undefined`. */
  check(nonce: string, route: string): number | undefined;
}

export function createNonceIssuer(secret: string): NonceIssuer {
  const key = Buffer.from(secret, 'utf8');
  const mac = (random: string, time: string, route: string) =>
    createHmac('sha256', key)
      .update(`tollbooth sign-in nonce\0${route}\0${random}${time}`)
      .digest()
      .subarray(0, 16);
  return {
    issue(route, at) {
      const random = randomBytes(8).toString('hex');
      const time = Math.max(0, Math.floor(at)).toString(16).padStart(12, '0').slice(-12);
      return `${random}${time}${mac(random, time, route).toString('hex')}`;
    },
    check(nonce, route) {
      const parts = NONCE.exec(nonce);
      if (!parts) return undefined;
      const [, random, time, tag] = parts as unknown as [string, string, string, string];
      if (!timingSafeEqual(Buffer.from(tag, 'hex'), mac(random, time, route))) return undefined;
      return Number.parseInt(time, 16);
    },
  };
}
