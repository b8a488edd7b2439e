// JSON Schemas written by hand from docs/fee-service-contract.md (Bodies), independent of the service's zod
// schemas, so the service is checked against the contract rather than against itself.
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

const nonNegative = { type: 'number', minimum: 0 } as const;

const feeRates = {
  type: 'object',
  required: ['fastest', 'half_hour', 'hour', 'economy', 'minimum'],
  properties: {
    fastest: nonNegative,
    half_hour: nonNegative,
    hour: nonNegative,
    economy: nonNegative,
    minimum: nonNegative,
  },
};
const mempool = {
  type: 'object',
  required: ['vsize', 'transaction_count', 'projected_block_count'],
  properties: { vsize: nonNegative, transaction_count: nonNegative, projected_block_count: nonNegative },
};
const savings = {
  type: 'object',
  required: ['sat_vb', 'percent', 'at_140_vbytes_sat'],
  properties: { sat_vb: nonNegative, percent: nonNegative, at_140_vbytes_sat: nonNegative },
};
const sharedMeta = {
  snapshot_schema: { type: 'string', pattern: '-v1$' },
  snapshot_digest: { type: 'string', pattern: '^sha256:[0-9a-f]{64}$' },
  source: { type: 'string', minLength: 1 },
  fetched_at: { type: 'string', format: 'date-time' },
  age_seconds: nonNegative,
  stale: { type: 'boolean' },
  algorithm_version: { const: 'send-wait-v1' },
};
const sharedMetaRequired = Object.keys(sharedMeta);

/** FeePreview (docs/fee-service-contract.md#feepreview). */
export const FEE_PREVIEW_SCHEMA = {
  type: 'object',
  required: ['data', 'meta'],
  properties: {
    data: {
      type: 'object',
      required: ['fee_rates_sat_vb', 'mempool', 'potential_savings', 'paid_resource'],
      properties: {
        fee_rates_sat_vb: feeRates,
        mempool,
        potential_savings: savings,
        paid_resource: {
          type: 'object',
          required: ['method', 'path', 'price', 'network'],
          properties: {
            method: { const: 'GET' },
            path: { const: '/api/v1/fees/now' },
            price: { const: '0.001 USDC' },
            network: { type: 'string' },
          },
        },
      },
    },
    meta: { type: 'object', required: sharedMetaRequired, properties: sharedMeta },
  },
};

/** FeeDecision (docs/fee-service-contract.md#feedecision). */
export const FEE_DECISION_SCHEMA = {
  type: 'object',
  required: ['data', 'meta', 'limitations'],
  properties: {
    data: {
      type: 'object',
      required: ['fee_rates_sat_vb', 'mempool', 'potential_savings', 'decision', 'reason_codes'],
      not: { required: ['paid_resource'] },
      properties: {
        fee_rates_sat_vb: feeRates,
        mempool,
        potential_savings: savings,
        decision: { enum: ['send', 'wait'] },
        reason_codes: {
          type: 'array',
          minItems: 1,
          maxItems: 2,
          uniqueItems: true,
          items: { enum: ['meaningful_fee_curve_savings', 'heavy_backlog', 'limited_wait_savings'] },
        },
      },
    },
    meta: {
      type: 'object',
      required: [...sharedMetaRequired, 'schema_version', 'evidence', 'payment'],
      properties: {
        ...sharedMeta,
        schema_version: { const: '2026-08-06' },
        evidence: { enum: ['recorded', 'degraded'] },
        payment: {
          type: 'object',
          required: ['amount', 'currency', 'facilitator', 'network', 'transaction_hash'],
          properties: {
            amount: { const: '0.001' },
            currency: { const: 'USDC' },
            facilitator: { type: 'string', minLength: 1 },
            network: { type: 'string' },
            transaction_hash: { type: 'string', pattern: '^0x[0-9a-fA-F]{64}$' },
          },
        },
      },
    },
    limitations: { type: 'array', items: { type: 'string' } },
  },
};

/** Error (docs/fee-service-contract.md#error). */
export const ERROR_SCHEMA = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'request_id', 'retryable'],
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        request_id: { type: 'string' },
        retryable: { type: 'boolean' },
        retry: {
          type: 'object',
          required: ['instruction'],
          properties: { instruction: { const: 'retry_exact_payment_payload' } },
        },
      },
    },
  },
};

/** PaymentRequired, x402 v2 (docs/fee-service-contract.md#paymentrequired). */
export const PAYMENT_REQUIRED_SCHEMA = {
  type: 'object',
  required: ['x402Version', 'resource', 'accepts'],
  properties: {
    x402Version: { const: 2 },
    resource: {
      type: 'object',
      required: ['url'],
      properties: { url: { type: 'string' }, description: { type: 'string' }, mimeType: { type: 'string' } },
    },
    accepts: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['scheme', 'network', 'asset', 'amount', 'payTo', 'maxTimeoutSeconds'],
        properties: {
          scheme: { type: 'string' },
          network: { type: 'string' },
          asset: { type: 'string' },
          amount: { type: 'string', pattern: '^[0-9]+$' },
          payTo: { type: 'string' },
          maxTimeoutSeconds: { type: 'integer', minimum: 1 },
        },
      },
    },
  },
};

const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);

function validator(schema: object) {
  const validate = ajv.compile(schema);
  /** Throws with every violation when `value` does not satisfy the schema. */
  return (value: unknown): void => {
    if (!validate(value)) {
      throw new Error(
        `schema violation: ${ajv.errorsText(validate.errors, { separator: '; ' })}\n${JSON.stringify(value)}`,
      );
    }
  };
}

export const assertFeePreview = validator(FEE_PREVIEW_SCHEMA);
export const assertFeeDecision = validator(FEE_DECISION_SCHEMA);
export const assertErrorBody = validator(ERROR_SCHEMA);
export const assertPaymentRequired = validator(PAYMENT_REQUIRED_SCHEMA);
