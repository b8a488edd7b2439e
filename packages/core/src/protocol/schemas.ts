import * as z from 'zod';

/**
 * The x402 wire types. These zod schemas are the only definition of them: every TypeScript type
 * below is inferred. Optional fields accept JSON `null` (Python and Go clients send it) and read
 * as `undefined`. Objects are loose: unknown keys are kept, because a client copies our
 * requirements verbatim and may add keys to `extra`.
 */

/** An optional field that also accepts JSON `null`, read as `undefined`. */
export const nullish = <T extends z.ZodType>(schema: T) =>
  schema
    .nullish()
    .transform((value) => value ?? undefined)
    .optional();

/** A decimal string of atomic units: digits only, no sign, no exponent. */
export const AtomicAmount = z.string().regex(/^\d+$/, 'must be a decimal string of atomic units');

/** A CAIP-2 network id such as `eip155:8453`. */
export const Caip2Network = z
  .string()
  .regex(/^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/, 'must be a CAIP-2 network id');

export const Extensions = z.record(z.string(), z.unknown());

export const ResourceInfo = z.looseObject({
  url: z.string().min(1),
  description: nullish(z.string()),
  mimeType: nullish(z.string()),
});
export type ResourceInfo = z.infer<typeof ResourceInfo>;

export const PaymentRequirements = z.looseObject({
  scheme: z.string().min(1),
  network: z.string().min(1),
  amount: AtomicAmount,
  asset: z.string().min(1),
  payTo: z.string().min(1),
  maxTimeoutSeconds: z.number().int().positive(),
  extra: nullish(z.record(z.string(), z.unknown())),
});
export type PaymentRequirements = z.infer<typeof PaymentRequirements>;

export const PaymentRequired = z.looseObject({
  x402Version: z.literal(2),
  error: nullish(z.string()),
  resource: ResourceInfo,
  accepts: z.array(PaymentRequirements).min(1),
  extensions: nullish(Extensions),
});
export type PaymentRequired = z.infer<typeof PaymentRequired>;

export const PaymentPayload = z.looseObject({
  x402Version: z.literal(2),
  resource: nullish(ResourceInfo),
  accepted: PaymentRequirements,
  payload: z.record(z.string(), z.unknown()),
  extensions: nullish(Extensions),
});
export type PaymentPayload = z.infer<typeof PaymentPayload>;

export const VerifyResponse = z.looseObject({
  isValid: z.boolean(),
  invalidReason: nullish(z.string()),
  invalidMessage: nullish(z.string()),
  payer: nullish(z.string()),
});
export type VerifyResponse = z.infer<typeof VerifyResponse>;

export const SettleResponse = z.looseObject({
  success: z.boolean(),
  errorReason: nullish(z.string()),
  errorMessage: nullish(z.string()),
  payer: nullish(z.string()),
  transaction: z.string(),
  network: z.string(),
  amount: nullish(z.string()),
  extensions: nullish(Extensions),
});
export type SettleResponse = z.infer<typeof SettleResponse>;

export const SupportedKind = z.looseObject({
  x402Version: z.number().int(),
  scheme: z.string(),
  network: z.string(),
  extra: nullish(z.record(z.string(), z.unknown())),
});
export type SupportedKind = z.infer<typeof SupportedKind>;

export const SupportedResponse = z.looseObject({
  kinds: z.array(SupportedKind),
  extensions: z.array(z.string()).default([]),
  signers: z.record(z.string(), z.array(z.string())).default({}),
});
export type SupportedResponse = z.infer<typeof SupportedResponse>;

/** Body of `POST /verify` and `POST /settle` on a facilitator. */
export const FacilitatorRequest = z.looseObject({
  x402Version: z.union([z.literal(1), z.literal(2)]),
  paymentPayload: z.unknown(),
  paymentRequirements: z.unknown(),
});
export type FacilitatorRequest = z.infer<typeof FacilitatorRequest>;

// ---------------------------------------------------------------------------------------------
// x402 v1 (legacy `X-PAYMENT`)

/** v1 network names, as the v1 packages spell them, mapped to CAIP-2. */
export const V1_NETWORKS: Readonly<Record<string, string>> = {
  base: 'eip155:8453',
  'base-sepolia': 'eip155:84532',
  ethereum: 'eip155:1',
  sepolia: 'eip155:11155111',
  polygon: 'eip155:137',
  'polygon-amoy': 'eip155:80002',
  avalanche: 'eip155:43114',
  'avalanche-fuji': 'eip155:43113',
};

export const PaymentRequirementsV1 = z.looseObject({
  scheme: z.string().min(1),
  network: z.string().min(1),
  maxAmountRequired: AtomicAmount,
  resource: z.string(),
  description: z.string(),
  mimeType: z.string(),
  outputSchema: nullish(z.record(z.string(), z.unknown())),
  payTo: z.string().min(1),
  maxTimeoutSeconds: z.number().int().positive(),
  asset: z.string().min(1),
  extra: nullish(z.record(z.string(), z.unknown())),
});
export type PaymentRequirementsV1 = z.infer<typeof PaymentRequirementsV1>;

export const PaymentRequiredV1 = z.looseObject({
  x402Version: z.literal(1),
  error: z.string(),
  accepts: z.array(PaymentRequirementsV1),
});
export type PaymentRequiredV1 = z.infer<typeof PaymentRequiredV1>;

export const PaymentPayloadV1 = z.looseObject({
  x402Version: z.literal(1),
  scheme: z.string().min(1),
  network: z.string().min(1),
  payload: z.record(z.string(), z.unknown()),
});
export type PaymentPayloadV1 = z.infer<typeof PaymentPayloadV1>;

/** Either payload version, as decoded from `PAYMENT-SIGNATURE` or `X-PAYMENT`. */
export const AnyPaymentPayload = z.discriminatedUnion('x402Version', [PaymentPayload, PaymentPayloadV1]);
export type AnyPaymentPayload = z.infer<typeof AnyPaymentPayload>;
