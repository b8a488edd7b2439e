import * as z from 'zod';

/**
 * The `payment-identifier` extension of x402 v2: a client-chosen idempotency key carried in the
 * payment payload's `extensions`. A server advertises it in the challenge as `{info: {required},
 * schema}`; the client echoes that object with `info.id` added. Wire facts as the official
 * `@x402/extensions` 2.27.0 emits and checks them (docs/payment-identifier.md).
 */
export const PAYMENT_IDENTIFIER = 'payment-identifier';

/** Shortest and longest identifier, and the characters allowed: ASCII letters, digits, `-` and `_`. */
export const PAYMENT_IDENTIFIER_MIN_LENGTH = 16;
export const PAYMENT_IDENTIFIER_MAX_LENGTH = 128;
export const PAYMENT_IDENTIFIER_PATTERN = '^[a-zA-Z0-9_-]+$';

/** An identifier as the extension allows it. */
export const PaymentIdentifier = z
  .string()
  .min(PAYMENT_IDENTIFIER_MIN_LENGTH)
  .max(PAYMENT_IDENTIFIER_MAX_LENGTH)
  .regex(new RegExp(PAYMENT_IDENTIFIER_PATTERN));

/** The extension's `info`: the server's `required`, and the client's `id`. */
export const PaymentIdentifierInfoSchema = z.object({
  required: z.boolean().nullish(),
  id: PaymentIdentifier.nullish(),
});
export type PaymentIdentifierInfo = z.infer<typeof PaymentIdentifierInfoSchema>;

/** JSON Schema (draft 2020-12) of `info`, sent beside it in the challenge. */
export const PAYMENT_IDENTIFIER_JSON_SCHEMA = Object.freeze({
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    required: { type: 'boolean' },
    id: {
      type: 'string',
      minLength: PAYMENT_IDENTIFIER_MIN_LENGTH,
      maxLength: PAYMENT_IDENTIFIER_MAX_LENGTH,
      pattern: PAYMENT_IDENTIFIER_PATTERN,
    },
  },
  required: ['required'],
});

/**
 * The extension as a challenge advertises it.
 *
 * @param required - whether a payment must carry an identifier (default false).
 * @example
 * paymentRequired.extensions = { [PAYMENT_IDENTIFIER]: declarePaymentIdentifier() };
 */
export function declarePaymentIdentifier(required = false): {
  info: { required: boolean };
  schema: typeof PAYMENT_IDENTIFIER_JSON_SCHEMA;
} {
  return { info: { required }, schema: PAYMENT_IDENTIFIER_JSON_SCHEMA };
}

/** What a payment payload says about its identifier. */
export type PaymentIdentifierReading =
  | { kind: 'absent' }
  | { kind: 'present'; id: string }
  | { kind: 'malformed'; message: string };

/**
 * Reads the identifier a payment payload carries in `extensions['payment-identifier'].info.id`.
 * No extension, or one without `id`, is `absent`; an `id` outside the extension's length or
 * character rules (or an extension that is not an object with an `info` object) is `malformed`.
 */
export function readPaymentIdentifier(extensions: unknown): PaymentIdentifierReading {
  if (extensions === null || extensions === undefined || typeof extensions !== 'object')
    return { kind: 'absent' };
  const extension = (extensions as Record<string, unknown>)[PAYMENT_IDENTIFIER];
  if (extension === undefined || extension === null) return { kind: 'absent' };
  const info = typeof extension === 'object' ? (extension as { info?: unknown }).info : undefined;
  if (info === null || typeof info !== 'object' || Array.isArray(info)) {
    return {
      kind: 'malformed',
      message: `extensions["${PAYMENT_IDENTIFIER}"] must be an object with an info object`,
    };
  }
  const id = (info as { id?: unknown }).id;
  if (id === undefined || id === null) return { kind: 'absent' };
  const parsed = PaymentIdentifier.safeParse(id);
  if (!parsed.success) {
    return {
      kind: 'malformed',
      message: `the payment identifier must be ${PAYMENT_IDENTIFIER_MIN_LENGTH}-${PAYMENT_IDENTIFIER_MAX_LENGTH} characters of A-Z, a-z, 0-9, "-" and "_"`,
    };
  }
  return { kind: 'present', id: parsed.data };
}
