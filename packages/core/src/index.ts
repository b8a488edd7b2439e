// @tollbooth/core: the x402 v2 protocol model and the framework-neutral payment gate.
// The public API, by name. Two more entry points: `@tollbooth/core/node` (the Node HTTP helpers
// the adapters are built from) and `@tollbooth/core/discovery` (the discovery documents); the
// test doubles are on `@tollbooth/core/testing`. Everything else is internal. The README lists
// each entry point's API. A name a module exports is public only once it is listed here.

// Errors.
export {
  buildErrorBody,
  ERROR_CODES,
  ERRORS_DOCS_URL,
  type ErrorBody,
  type ErrorBodyInput,
  type ErrorCode,
  errorDocsUrl,
  httpStatusOf,
  isErrorCode,
  isRetryable,
  TollboothConfigError,
  TollboothError,
  type TollboothErrorOptions,
} from './errors/index';
// Facilitator clients.
export {
  createHttpFacilitatorClient,
  type FacilitatorCallOptions,
  type FacilitatorClient,
  FacilitatorError,
  type FacilitatorErrorKind,
  type FacilitatorOperation,
  HTTP_FACILITATOR_CLIENT_DEFAULTS,
  type HttpFacilitatorClient,
  type HttpFacilitatorClientOptions,
  isFacilitatorError,
} from './facilitator/index';
// The payment gate.
export {
  codeForReason,
  createPaymentGate,
  EXPOSED_PAYMENT_HEADERS,
  findRequirement,
  type GateEvent,
  type GateFailure,
  type GateHooks,
  type GateLogger,
  type GateReadiness,
  type GateResponse,
  type HandlerResponse,
  type Outcome,
  PAYMENT_GATE_DEFAULTS,
  type PaidRequest,
  type PaymentGate,
  type PaymentGateOptions,
  type RequestView,
  type TollboothGate,
  type TransferEvent,
} from './gate/index';
// The settlement ledger's stores: the interface, the in-memory store, and what a store is built from.
export {
  assertLedgerInvariant,
  type ClaimResult,
  FINAL_STATES,
  fromLedgerRow,
  type IdentifierBinding,
  IN_FLIGHT_STATES,
  LEDGER_ERROR_STATUS,
  LEDGER_JSON_COLUMNS,
  type LedgerColumn,
  type LedgerColumnValue,
  type LedgerEntry,
  type LedgerExpectation,
  type LedgerPatch,
  type LedgerQuery,
  type LedgerResolution,
  type LedgerRow,
  type LedgerState,
  type LedgerStore,
  type StoredResponse,
  settlesWithStoredResponse,
  toLedgerColumns,
} from './ledger/index';
export {
  createMemoryLedgerStore,
  LEDGER_QUERY_DEFAULT_LIMIT,
  MEMORY_LEDGER_STORE_DEFAULTS,
  type MemoryLedgerStoreOptions,
} from './ledger/memory/index';
// The browser paywall.
export {
  type BrowserPaywall,
  createBrowserPaywall,
  PAYWALL_NETWORKS,
  type PaywallNetwork,
  type PaywallOptions,
} from './paywall/index';
// The x402 wire: schemas, header codec, amounts, networks.
export {
  AnyPaymentPayload,
  AtomicAmount,
  CAIP2_NETWORK,
  Caip2Network,
  DEFAULT_MAX_PAYMENT_HEADER_BYTES,
  type DecodePaymentHeaderOptions,
  declarePaymentIdentifier,
  decodeHeaderJson,
  decodePaymentHeader,
  Extensions,
  encodeHeader,
  encodeJsonHeader,
  FacilitatorRequest,
  fromAtomicAmount,
  isCaip2Network,
  PAYMENT_IDENTIFIER,
  PAYMENT_IDENTIFIER_JSON_SCHEMA,
  PAYMENT_IDENTIFIER_MAX_LENGTH,
  PAYMENT_IDENTIFIER_MIN_LENGTH,
  PAYMENT_IDENTIFIER_PATTERN,
  PaymentIdentifier,
  type PaymentIdentifierInfo,
  PaymentIdentifierInfoSchema,
  type PaymentIdentifierReading,
  PaymentPayload,
  PaymentPayloadV1,
  PaymentRequired,
  PaymentRequiredV1,
  PaymentRequirements,
  PaymentRequirementsV1,
  ResourceInfo,
  readPaymentIdentifier,
  SettleResponse,
  SupportedKind,
  SupportedResponse,
  toAtomicAmount,
  V1_NETWORKS,
  VerifyResponse,
} from './protocol/index';
// Routes.
export {
  type Availability,
  type CanonicalRule,
  type Challenge,
  type CompiledRoute,
  type CompileRoutesOptions,
  compileRoutes,
  type PaymentOption,
  ROUTE_DEFAULTS,
  type RouteConfig,
  type RouteDiscovery,
  type RouteMatch,
  type RoutesConfig,
  type RouteTable,
  type SettleOrder,
} from './routes/index';
// The scheme interface (implemented by @tollbooth/evm).
export type {
  AssetAmount,
  ChainStatus,
  PaymentIdentity,
  PreVerifyResult,
  Price,
  ReconcileInput,
  ReconcileResult,
  SchemeServer,
} from './scheme';
