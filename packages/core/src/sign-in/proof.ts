import * as z from 'zod';
import { TollboothError } from '../errors/tollbooth-error';
import { decodeHeaderJson } from '../protocol/codec';

/** The request header that carries a sign-in proof (x402 `sign-in-with-x`, docs/sign-in-with-x.md). */
export const SIGN_IN_HEADER = 'sign-in-with-x';
/** The extension's name in a challenge's `extensions`. */
export const SIGN_IN_EXTENSION = 'sign-in-with-x';

// Python and Go clients send absent optional fields as JSON null: read as absent.
const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((value) => (value === null ? undefined : value), schema.optional());
const instant = z.string().refine((value) => !Number.isNaN(Date.parse(value)), 'not an ISO 8601 date-time');

/**
 * The sign-in proof the `SIGN-IN-WITH-X` header carries: the challenge's `info` fields as signed,
 * the signer's `address`, the chain and signature type chosen among the challenge's
 * `supportedChains`, and the `signature` over the message those fields make (EVM: EIP-4361).
 */
export const SignInProofSchema = z.object({
  domain: z.string().min(1),
  address: z.string().min(1),
  statement: optional(z.string()),
  uri: z.string().min(1),
  version: z.string().min(1),
  chainId: z.string().min(1),
  type: z.string().min(1),
  nonce: z.string().min(1),
  issuedAt: instant,
  expirationTime: optional(instant),
  notBefore: optional(instant),
  requestId: optional(z.string()),
  resources: optional(z.array(z.string())),
  signatureScheme: optional(z.enum(['eip191', 'eip1271', 'eip6492', 'siws'])),
  signature: z.string().min(1),
});

export type SignInProof = z.infer<typeof SignInProofSchema>;

/**
 * Reads a `SIGN-IN-WITH-X` header: size cap, standard base64, UTF-8 JSON, then the proof's fields.
 *
 * @throws TollboothError `sign_in_proof_too_large`, `sign_in_proof_invalid_base64`,
 *   `sign_in_proof_invalid_json` or `sign_in_proof_invalid` (the message names the field).
 */
export function readSignInProof(value: string, maxBytes: number): SignInProof {
  if (value.length > maxBytes)
    throw new TollboothError('sign_in_proof_too_large', `sign-in proof longer than ${maxBytes} characters`);
  let json: unknown;
  try {
    json = decodeHeaderJson(value);
  } catch (error) {
    if (error instanceof TollboothError && error.code === 'payment_header_invalid_base64')
      throw new TollboothError('sign_in_proof_invalid_base64', 'SIGN-IN-WITH-X is not standard base64');
    throw new TollboothError('sign_in_proof_invalid_json', 'SIGN-IN-WITH-X does not decode to UTF-8 JSON');
  }
  const parsed = SignInProofSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
    throw new TollboothError('sign_in_proof_invalid', `SIGN-IN-WITH-X ${where}${issue.message}`);
  }
  return parsed.data;
}
