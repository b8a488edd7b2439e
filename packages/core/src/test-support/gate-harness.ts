// Test support for the gate's own tests (not exported): one gate on a memory ledger with a manual
// clock, the scripted facilitator and the simple scheme, and what its hooks and logger saw; or the
// runtime its steps share, for a test of one step. Build one inside a test or `beforeEach`, never
// at import: mutation testing switches a mutant on after the test file was imported.

import type { Admitted } from '../gate/admit';
import { AuthenticatedHeaders } from '../gate/authenticated-headers';
import { parseGateOptions } from '../gate/config';
import { createPaymentGate, type TollboothGate } from '../gate/create-payment-gate';
import type { GateLogger, PaymentGateOptions } from '../gate/options';
import { type PaymentHeader, type PaymentRead, readPayment } from '../gate/read-payment';
import type { GateRuntime } from '../gate/runtime';
import type { GateHooks, Outcome } from '../gate/types';
import type { GateResponse, HandlerResponse, RequestView } from '../http/types';
import { createMemoryLedgerStore } from '../ledger/memory/index';
import { SettlementLedger } from '../ledger/settlement-ledger';
import type { LedgerEntry, LedgerStore } from '../ledger/types';
import { decodeHeaderJson, encodeHeader } from '../protocol/codec';
import type { PaymentPayload, PaymentRequirements } from '../protocol/schemas';
import type { RoutesConfig } from '../routes/types';
import { createScriptedFacilitator, type ScriptedFacilitator } from './scripted-facilitator';
import { buildPayment, createSimpleScheme, type SimpleScheme, TEST_PAY_TO } from './simple-scheme';

export const BASE = 'https://api.example.com';
export const NETWORK = 'eip155:8453';
export const ACCEPTS = { network: NETWORK, payTo: TEST_PAY_TO, price: '$0.001', maxTimeoutSeconds: 60 };

/** The routes most gate tests need: after and before the handler, x402 v1, payment identifiers. */
export const harnessRoutes = (): RoutesConfig => ({
  'GET /paid': { accepts: ACCEPTS },
  'GET /first': { accepts: ACCEPTS, settle: 'before-handler' },
  'GET /old': { accepts: ACCEPTS, x402Version: 1 },
  'GET /named': { accepts: ACCEPTS, paymentIdentifier: true },
});

export interface LogLine {
  level: 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  message: string;
}

/** A pino-shaped logger that keeps every line. */
export interface RecordingLogger extends GateLogger {
  lines: LogLine[];
  /** The messages logged at a level, in order. */
  messages(level: LogLine['level']): string[];
}

export function recordingLogger(): RecordingLogger {
  const lines: LogLine[] = [];
  const at = (level: LogLine['level']) => (fields: Record<string, unknown>, message: string) =>
    void lines.push({ level, fields, message });
  return {
    lines,
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    messages: (level) => lines.filter((l) => l.level === level).map((l) => l.message),
  };
}

/** Every hook of the gate, each call kept as its name and arguments. */
export interface HookRecorder {
  hooks: Required<GateHooks>;
  calls: Array<{ name: keyof GateHooks; args: unknown[] }>;
  /** The arguments of each call of one hook. */
  of(name: keyof GateHooks): unknown[][];
}

export function recordingHooks(): HookRecorder {
  const calls: HookRecorder['calls'] = [];
  const names: Array<keyof GateHooks> = [
    'onMatched',
    'onChallenge',
    'onVerified',
    'onSignedIn',
    'onFailed',
    'onSettled',
    'onRejected',
    'onReleased',
    'onTransfer',
    'onReplay',
    'onResolved',
  ];
  const hooks = Object.fromEntries(
    names.map((name) => [name, (...args: unknown[]) => void calls.push({ name, args })]),
  ) as unknown as Required<GateHooks>;
  return { hooks, calls, of: (name) => calls.filter((c) => c.name === name).map((c) => c.args) };
}

/** Epoch ms that moves only when a test moves it. */
export interface ManualClock {
  now: number;
  advance(ms: number): void;
}

export interface HarnessOptions {
  routes?: RoutesConfig;
  /** Options of the gate over the harness's own (its clock, store, doubles, hooks and logger). */
  gate?: Partial<PaymentGateOptions>;
}

/** The parts a gate is built from, shared by the whole-gate and the one-step harnesses. */
export interface GateParts {
  facilitator: ScriptedFacilitator;
  scheme: SimpleScheme;
  store: LedgerStore;
  clock: ManualClock;
  logger: RecordingLogger;
  recorder: HookRecorder;
  options: PaymentGateOptions;
  /**
   * Resolves once the scheme has checked `n` payments in all and the event loop has turned, so a
   * request started after the n-th check has gone as far as it can without a timer (waiting for
   * a payment in flight, say).
   */
  checked(n: number): Promise<void>;
}

export function gateParts(options: HarnessOptions = {}): GateParts {
  const clock: ManualClock = {
    now: Date.now(),
    advance(ms) {
      clock.now += ms;
    },
  };
  const facilitator = createScriptedFacilitator();
  const scheme = createSimpleScheme();
  const store = createMemoryLedgerStore({ purgeIntervalMs: 0, now: () => clock.now });
  const logger = recordingLogger();
  const recorder = recordingHooks();
  let checks = 0;
  const waiting: Array<{ n: number; resolve: () => void }> = [];
  const preVerify = scheme.preVerify;
  scheme.preVerify = (...args) => {
    checks += 1;
    for (const waiter of waiting.filter((w) => w.n <= checks)) waiter.resolve();
    return preVerify(...args);
  };
  const checked = async (n: number) => {
    if (checks < n) await new Promise<void>((resolve) => waiting.push({ n, resolve }));
    await new Promise((resolve) => setImmediate(resolve));
  };
  return {
    checked,
    facilitator,
    scheme,
    store,
    clock,
    logger,
    recorder,
    options: {
      routes: options.routes ?? harnessRoutes(),
      schemes: [scheme],
      facilitator,
      ledger: store,
      baseUrl: BASE,
      now: () => clock.now,
      inFlightWaitMs: 200,
      pollIntervalMs: 5,
      reconcileIntervalMs: 0,
      instanceId: 'alpha',
      logger,
      hooks: recorder.hooks,
      ...options.gate,
    },
  };
}

export interface RunResult {
  outcome: Outcome;
  /** What the client gets: the gate's answer, or the handler's through the outcome's `settle`. */
  response: GateResponse | undefined;
  handlerRuns: number;
}

export interface GateHarness extends GateParts {
  gate: TollboothGate;
  /** Another gate (another instance) on the same store, doubles and clock. */
  another(overrides?: Partial<PaymentGateOptions>): TollboothGate;
  requirementOf(key?: string): PaymentRequirements;
  /** A newly signed payment for a route, valid from the harness clock on. */
  payment(key?: string, options?: Parameters<typeof buildPayment>[1]): PaymentPayload;
  view(path: string, headers?: Record<string, string>, method?: string): RequestView;
  pay(payment: unknown, path?: string, header?: string): RequestView;
  /** Handles a request on a gate and, told to proceed, runs a handler answering `status`. */
  run(request: RequestView, status?: number, on?: TollboothGate): Promise<RunResult>;
  onlyEntry(): Promise<LedgerEntry>;
  /**
   * Puts a payment's entry straight into the ledger, as an instance that died holding it left it
   * (owner `dead:r-0`, lease run out) unless `fields` say otherwise.
   */
  seed(payment: PaymentPayload, fields?: Partial<LedgerEntry>, key?: string): Promise<LedgerEntry>;
}

export function createGateHarness(options: HarnessOptions = {}): GateHarness {
  const parts = gateParts(options);
  const gate = createPaymentGate(parts.options);
  const requirementOf = (key = 'GET /paid') => gate.routes.get(key)!.requirements[0]!;
  let runs = 0;
  return {
    ...parts,
    gate,
    another: (overrides = {}) => createPaymentGate({ ...parts.options, instanceId: 'beta', ...overrides }),
    requirementOf,
    payment: (key = 'GET /paid', payment = {}) =>
      buildPayment(requirementOf(key), { now: Math.floor(parts.clock.now / 1000), ...payment }),
    view: (path, headers = {}, method = 'GET') => viewOf(path, headers, method),
    pay: (payment, path = '/paid', header = 'payment-signature') =>
      viewOf(path, { [header]: encodeHeader(payment) }),
    async run(request, status = 200, on = gate) {
      const outcome = await on.handle(request);
      if (outcome.kind === 'pass') return { outcome, response: undefined, handlerRuns: 0 };
      if (outcome.kind !== 'proceed') return { outcome, response: outcome.response, handlerRuns: 0 };
      runs += 1;
      const response = await outcome.settle(handlerResponse(status, `{"run":${runs}}`));
      return { outcome, response, handlerRuns: 1 };
    },
    async onlyEntry() {
      const entries = await parts.store.query({});
      if (entries.length !== 1) throw new Error(`expected one ledger entry, found ${entries.length}`);
      return entries[0]!;
    },
    async seed(payment, fields = {}, key = 'GET /paid') {
      const requirement = requirementOf(key);
      const pre = await parts.scheme.preVerify(payment, requirement, 0);
      if (!pre.ok) throw new Error(`cannot seed a payment the scheme refuses: ${pre.message}`);
      const entry: LedgerEntry = {
        id: pre.identity,
        state: 'claimed',
        resource: gate.routes.get(key)!.resourceUrl(),
        route: key,
        network: requirement.network,
        payer: pre.payer,
        payload: payment,
        requirements: requirement,
        validBefore: pre.validBefore,
        owner: 'dead:r-0',
        leaseUntil: 0,
        createdAt: parts.clock.now,
        updatedAt: parts.clock.now,
        expiresAt: pre.validBefore * 1000 + 86_400_000,
        ...fields,
      };
      const claimed = await parts.store.claim(entry);
      if (!claimed.acquired) throw new Error('the payment is in the ledger already');
      return claimed.entry;
    },
  };
}

export function viewOf(path: string, headers: Record<string, string> = {}, method = 'GET'): RequestView {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return {
    method,
    url: path.startsWith('http') ? path : `${BASE}${path}`,
    header: (name) => lower[name.toLowerCase()],
  };
}

export function handlerResponse(status = 200, body = '{"ok":true}'): HandlerResponse {
  return { status, headers: { 'content-type': 'application/json' }, body: Buffer.from(body) };
}

/** The runtime the gate's steps share, for a test of one step. */
export interface RuntimeHarness extends GateParts {
  rt: GateRuntime;
  requirementOf(key?: string): PaymentRequirements;
  payment(key?: string, options?: Parameters<typeof buildPayment>[1]): PaymentPayload;
  admitted(path?: string, requestId?: string, request?: Partial<RequestView>): Admitted;
  /** Reads a payment as the gate does before claiming it (`readPayment`); throws on a refusal. */
  read(payment: unknown, path?: string, requestId?: string): Promise<PaymentRead>;
}

export function createRuntimeHarness(options: HarnessOptions = {}): RuntimeHarness {
  const parts = gateParts(options);
  const config = parseGateOptions(parts.options);
  const now = () => parts.clock.now;
  const ledger = new SettlementLedger({
    store: parts.store,
    instanceId: config.instanceId,
    leaseMs: config.settings.leaseMs,
    retentionMs: config.settings.retentionMs,
    now,
  });
  const rt: GateRuntime = { ...config, ledger, authenticated: new AuthenticatedHeaders(ledger, now) };
  const requirementOf = (key = 'GET /paid') => rt.table.get(key)!.requirements[0]!;
  const admitted = (path = '/paid', requestId = 'r-1', request: Partial<RequestView> = {}): Admitted => {
    const view = { ...viewOf(path), ...request };
    const match = rt.table.match(view.method.toUpperCase(), view.url);
    if (!match) throw new Error(`no route at ${path}`);
    return { kind: 'matched', match, requestId, request: view };
  };
  return {
    ...parts,
    rt,
    requirementOf,
    payment: (key = 'GET /paid', payment = {}) =>
      buildPayment(requirementOf(key), { now: Math.floor(parts.clock.now / 1000), ...payment }),
    admitted,
    async read(payment, path = '/paid', requestId = 'r-1') {
      const header: PaymentHeader = { value: encodeHeader(payment), name: 'payment-signature' };
      const read = await readPayment(rt, admitted(path, requestId), header);
      if (read.kind !== 'read') throw new Error(`expected a read payment, got ${read.kind}`);
      return read;
    },
  };
}

/** An answer's body as JSON. */
export const bodyOf = (response: GateResponse): Record<string, unknown> =>
  JSON.parse(Buffer.from(response.body).toString('utf8'));

/** The code of an answer: an Error body's `error.code`, or a 402 body's `error`. */
export function codeOf(response: GateResponse | undefined): string | undefined {
  if (!response) return undefined;
  const error = bodyOf(response).error as string | { code: string } | undefined;
  return typeof error === 'string' ? error : error?.code;
}

/** The receipt an answer carries, decoded as a client reads it; `undefined` when there is none. */
export function receiptOf(response: GateResponse, name = 'payment-response'): unknown {
  const value = response.headers[name];
  return value === undefined ? undefined : decodeHeaderJson(value);
}
