// JSON Schemas written by hand from the tables of docs/fee-service-contract.md (Error, Catalog
// listing, Payment discovery document), independent of the code that builds the documents, for
// validating them with ajv.

const nonEmpty = { type: 'string', minLength: 1 } as const;
const isoTimestamp = { type: 'string', format: 'date-time' } as const;
const decimalUsd = { type: 'string', pattern: '^\\d+(\\.\\d+)?$' } as const;
const absoluteUrl = { type: 'string', pattern: '^https?://[^/]+' } as const;

/** Catalog listing: `{type, description, required}`. */
const parameterDescriptor = {
  type: 'object',
  required: ['type', 'description', 'required'],
  properties: { type: nonEmpty, description: { type: 'string' }, required: { type: 'boolean' } },
} as const;
const descriptorMap = { type: 'object', additionalProperties: parameterDescriptor } as const;

/** Catalog listing: input has type, method, resource, and pathParams, queryParams or bodyFields. */
const discoveryInput = {
  type: 'object',
  required: ['type', 'method'],
  properties: {
    type: { const: 'http' },
    method: { enum: ['GET', 'HEAD', 'DELETE', 'POST', 'PUT', 'PATCH'] },
    resource: absoluteUrl,
    pathParams: descriptorMap,
    queryParams: descriptorMap,
    bodyFields: descriptorMap,
  },
} as const;

const accept = {
  type: 'object',
  required: [
    'scheme',
    'network',
    'amount',
    'maxAmountRequired',
    'asset',
    'payTo',
    'maxTimeoutSeconds',
    'extra',
    'outputSchema',
  ],
  properties: {
    scheme: nonEmpty,
    network: nonEmpty,
    amount: { type: 'string', pattern: '^\\d+$' },
    maxAmountRequired: { type: 'string', pattern: '^\\d+$' },
    asset: nonEmpty,
    payTo: nonEmpty,
    maxTimeoutSeconds: { type: 'integer', minimum: 1 },
    extra: {
      type: 'object',
      required: ['name', 'version', 'facilitatorUrl'],
      properties: { name: nonEmpty, version: { type: 'string' }, facilitatorUrl: absoluteUrl },
    },
    outputSchema: {
      type: 'object',
      required: ['input', 'output'],
      properties: { input: discoveryInput },
    },
  },
} as const;

/** One item of the catalog listing (docs/fee-service-contract.md#catalog-listing). */
export const CATALOG_ITEM_SCHEMA = {
  type: 'object',
  required: [
    'resource',
    'type',
    'x402Version',
    'description',
    'mimeType',
    'accepts',
    'discoveryInfo',
    'lastUpdated',
    'metadata',
  ],
  properties: {
    resource: absoluteUrl,
    type: { const: 'http' },
    x402Version: { const: 2 },
    description: nonEmpty,
    mimeType: { const: 'application/json' },
    accepts: { type: 'array', minItems: 1, items: accept },
    discoveryInfo: {
      type: 'object',
      required: ['input', 'output'],
      properties: {
        input: { ...discoveryInput, required: ['type', 'method', 'resource'] },
        output: { type: 'object', required: ['mimeType'], properties: { mimeType: nonEmpty } },
      },
    },
    lastUpdated: isoTimestamp,
    metadata: {
      type: 'object',
      required: [
        'category',
        'keywords',
        'input',
        'description',
        'output',
        'extensions',
        'network',
        'priceUsd',
      ],
      properties: {
        category: nonEmpty,
        keywords: { type: 'array', items: { type: 'string' } },
        input: { type: 'object' },
        description: nonEmpty,
        output: { type: 'object' },
        extensions: { type: 'array', contains: { const: 'bazaar' } },
        network: nonEmpty,
        priceUsd: decimalUsd,
      },
    },
  },
} as const;

/** The catalog listing (docs/fee-service-contract.md#catalog-listing). */
export const CATALOG_LISTING_SCHEMA = {
  type: 'object',
  required: ['x402Version', 'items', 'pagination'],
  properties: {
    x402Version: { const: 2 },
    items: { type: 'array', items: CATALOG_ITEM_SCHEMA },
    pagination: {
      type: 'object',
      required: ['limit', 'offset', 'total'],
      properties: {
        limit: { type: 'integer', minimum: 1 },
        offset: { type: 'integer', minimum: 0 },
        total: { type: 'integer', minimum: 0 },
      },
    },
  },
} as const;

/** The payment discovery document (docs/fee-service-contract.md#payment-discovery-document). */
export const WELL_KNOWN_SCHEMA = {
  type: 'object',
  required: [
    'x402',
    'x402Version',
    'protocol',
    'scheme',
    'network',
    'asset',
    'payTo',
    'seller',
    'facilitator',
    'headers',
    'legacy',
    'paidEndpoints',
    'resources',
    'freeEndpoints',
    'howItWorks',
    'tryIt',
    'demo',
    'docs',
    'sdk',
  ],
  properties: {
    x402: { const: true },
    x402Version: { const: 2 },
    protocol: absoluteUrl,
    scheme: { const: 'exact' },
    network: nonEmpty,
    asset: nonEmpty,
    payTo: nonEmpty,
    seller: {
      type: 'object',
      required: ['origin', 'wellKnown', 'openapi'],
      properties: { origin: absoluteUrl, wellKnown: absoluteUrl, openapi: absoluteUrl },
    },
    facilitator: { type: 'object', required: ['url'], properties: { url: absoluteUrl } },
    headers: {
      type: 'object',
      required: ['paymentRequired', 'paymentSignature', 'paymentResponse'],
      properties: {
        paymentRequired: { const: 'PAYMENT-REQUIRED' },
        paymentSignature: { const: 'PAYMENT-SIGNATURE' },
        paymentResponse: { const: 'PAYMENT-RESPONSE' },
      },
    },
    legacy: {
      type: 'object',
      required: ['paymentHeader', 'accepted'],
      properties: { paymentHeader: { const: 'X-PAYMENT' }, accepted: { const: true } },
    },
    paidEndpoints: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['pattern', 'priceUsd', 'description', 'resources'],
        properties: {
          pattern: { type: 'string', pattern: '^/' },
          priceUsd: decimalUsd,
          description: nonEmpty,
          resources: { type: 'array', items: absoluteUrl },
        },
      },
    },
    resources: { type: 'array', items: { ...absoluteUrl, not: { pattern: '\\*' } } },
    freeEndpoints: nonEmpty,
    howItWorks: {
      type: 'array',
      minItems: 3,
      maxItems: 3,
      prefixItems: [
        { type: 'string', pattern: '^1\\. ' },
        { type: 'string', pattern: '^2\\. ' },
        { type: 'string', pattern: '^3\\. ' },
      ],
    },
    tryIt: nonEmpty,
    demo: nonEmpty,
    docs: nonEmpty,
    sdk: nonEmpty,
  },
} as const;

/** The Error body (docs/fee-service-contract.md#error). */
export const ERROR_BODY_SCHEMA = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'request_id', 'retryable'],
      properties: {
        code: nonEmpty,
        message: nonEmpty,
        request_id: nonEmpty,
        retryable: { type: 'boolean' },
        retry: {
          type: 'object',
          required: ['instruction'],
          properties: { instruction: { const: 'retry_exact_payment_payload' } },
        },
      },
    },
  },
} as const;
