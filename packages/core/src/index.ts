// @tollbooth/core: the x402 v2 protocol model and the framework-neutral payment gate.
// The public API, by name. More entry points: `@tollbooth/core/node` (the Node HTTP helpers the
// adapters are built from), `@tollbooth/core/discovery` (the discovery documents),
// `@tollbooth/core/ledger` (what the ledger store packages are built from); the test doubles are
// on `@tollbooth/core/testing`. Everything else is internal. The README lists each entry point's
// API. A name a module exports is public only once it is listed here.

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
  walk,
} from './errors/index';
// Facilitator clients.
export {
  type CheckFacilitatorSupportOptions,
  checkFacilitatorSupport,
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
  type PaymentKind,
  paymentKindsOf,
} from './facilitator/index';
// The payment gate.
export {
  codeForReason,
  createPaymentGate,
  findRequirement,
  type GateEvent,
  type GateFailure,
  type GateHooks,
  type GateLogger,
  type GateReadiness,
  type Outcome,
  PAYMENT_GATE_DEFAULTS,
  type PaidRequest,
  type PaymentGate,
  type PaymentGateOptions,
  type PaymentRequest,
  type SignedInRequest,
  type TollboothGate,
  type TransferEvent,
} from './gate/index';
// The adapter contract: what an adapter hands the gate and sends back, and the paid response's headers.
export {
  EXPOSED_PAYMENT_HEADERS,
  type GateResponse,
  type HandlerResponse,
  type RequestView,
  type StoredResponse,
} from './http/index';
// The settlement ledger's stores: the interface and the in-memory store. What a store package is
// built from (row mapping, the invariant, query limits) is on `@tollbooth/core/ledger`.
export type {
  AccessGrant,
  AccessQuery,
  AccessStore,
  AccessUse,
} from './ledger/access-types';
export {
  createMemoryLedgerStore,
  MEMORY_LEDGER_STORE_DEFAULTS,
  type MemoryLedgerStoreOptions,
} from './ledger/memory/index';
export type { BalanceReservation, ReservationResult, ReservationStore } from './ledger/reservation-types';
export {
  type BindResult,
  type ClaimResult,
  FINAL_STATES,
  type IdentifierBinding,
  IN_FLIGHT_STATES,
  LEDGER_ERROR_STATUS,
  type LedgerEntry,
  type LedgerExpectation,
  type LedgerPatch,
  type LedgerQuery,
  type LedgerResolution,
  type LedgerState,
  type LedgerStore,
  type LedgerWriteOptions,
  type NewIdentifierBinding,
  type ReplacedBinding,
} from './ledger/types';
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
  readWellFormedPayload,
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
  TOOL_METHOD,
} from './routes/index';
// The scheme interface (implemented by @tollbooth/evm).
export type {
  AssetAmount,
  ChainStatus,
  OnChainCheck,
  OnChainCheckInput,
  PaymentIdentity,
  PreVerifyResult,
  Price,
  ReconcileInput,
  ReconcileResult,
  SchemeServer,
} from './scheme';
// Sign-in-with-x: the proof, the policies, what a scheme implements (docs/sign-in-with-x.md).
export {
  type CompiledSignIn,
  createNonceIssuer,
  declareSignIn,
  type NonceIssuer,
  readSignInProof,
  type SchemeSignIn,
  SIGN_IN_DEFAULTS,
  SIGN_IN_EXTENSION,
  SIGN_IN_HEADER,
  SIGN_IN_PROOF_JSON_SCHEMA,
  type SignInOptions,
  type SignInPolicy,
  type SignInProof,
  SignInProofSchema,
  type SignInVerdict,
} from './sign-in/index';
