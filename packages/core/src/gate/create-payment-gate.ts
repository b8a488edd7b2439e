import { EXPOSED_PAYMENT_HEADERS, SettlementLedger } from '../ledger/settlement-ledger';
import { type Admitted, admissionRefusal, matchRequest, paymentHeaderOf, runPrecondition } from './admit';
import { AuthenticatedHeaders } from './authenticated-headers';
import { claimAndAnswer } from './claim';
import { parseGateOptions } from './config';
import { answerIdentified, identify } from './identified';
import type { PaymentGateOptions, TollboothGate } from './options';
import type { ProceedOutcome } from './proceed';
import { type PaymentHeader, readPayment } from './read-payment';
import { checkReadiness } from './readiness';
import { createLedgerReconciler } from './reconciler';
import { challengeResponse, codeOfBody, errorResponse, handlerAnswer, respond } from './responses';
import { type GateRuntime, safeHook } from './runtime';
import type { GateEvent, Outcome, PaidRequest, RequestView } from './types';

export {
  type GateLogger,
  type GateReadiness,
  PAYMENT_GATE_DEFAULTS,
  type PaymentGateOptions,
  type TollboothGate,
} from './options';
export { EXPOSED_PAYMENT_HEADERS };

/**
 * Creates the framework-neutral payment gate (`packages/core/README.md`): availability, canonical
 * rule, 402 challenges, decoding and matching of payments, scheme pre-verification, the
 * settlement ledger, verify, settle and every outcome. Adapters only translate.
 *
 * @throws TollboothError `invalid_config` listing every problem.
 * @example
 * const gate = createPaymentGate({
 *   routes: { 'GET /api/v1/fees/now': { accepts: { network: 'eip155:84532', payTo, price: '$0.001' } } },
 *   schemes: [exactEvmScheme],
 *   facilitator: createHttpFacilitatorClient({ url: 'https://x402.org/facilitator' }),
 * });
 */
export function createPaymentGate(options: PaymentGateOptions): TollboothGate {
  // 1. Options, parsed once; the ledger and its reconciler.
  const config = parseGateOptions(options);
  const { table, hooks, logger, now } = config;
  const ledger = new SettlementLedger({
    store: config.store,
    instanceId: config.instanceId,
    leaseMs: config.settings.leaseMs,
    retentionMs: config.settings.retentionMs,
    now,
    onLeaseError: (error, id) => logger?.warn({ err: error, id }, 'ledger lease renewal failed'),
  });
  const rt: GateRuntime = { ...config, ledger, authenticated: new AuthenticatedHeaders(ledger, now) };
  const reconciler = createLedgerReconciler({
    ledger,
    schemes: config.schemes,
    intervalMs: config.settings.reconcileIntervalMs,
    now,
    logger,
    hooks: {
      onTransfer: (event) => hooks.onTransfer?.(event),
      onResolved: (entry, resolution) => hooks.onResolved?.(entry, resolution),
    },
  });
  reconciler.start();
  /** Compatibility for `finish`/`release`: the open `proceed` of each payment. */
  const open = new WeakMap<PaidRequest, ProceedOutcome>();

  // 2. Admit: the paid route, its availability and canonical URL, its precondition, a payment header.
  async function handle(request: RequestView): Promise<Outcome> {
    const admitted = matchRequest(table, config.otherMethods, request);
    if (admitted.kind !== 'matched') return admitted;
    const { match, requestId } = admitted;
    const event: GateEvent = { requestId, request, route: match.route, resource: match.resourceUrl };
    if (hooks.onMatched) safeHook(rt, () => hooks.onMatched?.(event));
    const refused = admissionRefusal(request, match, requestId);
    if (refused) return reported(event, respond(refused));
    const early = await runPrecondition(rt, request, match, requestId);
    if (early) return early.quiet ? respond(early.response) : reported(event, respond(early.response));
    const header = paymentHeaderOf(request);
    if (!header) {
      const challenge = challengeResponse(match, requestId, 'payment_required');
      const sent = respond(config.paywall ? config.paywall.respond(request, challenge) : challenge);
      if (hooks.onChallenge) safeHook(rt, () => hooks.onChallenge?.({ ...event }));
      return sent;
    }
    const outcome = reported(event, await pay(request, admitted, header));
    if (outcome.kind === 'proceed') open.set(outcome.payment, outcome);
    return outcome;
  }

  // 3. Read the payment, 4. claim it in the ledger (verify; settle first on such a route).
  async function pay(request: RequestView, admitted: Admitted, header: PaymentHeader): Promise<Outcome> {
    const { match, requestId } = admitted;
    try {
      const read = await readPayment(rt, admitted, header);
      if (read.kind !== 'read') return read;
      if (read.identifier === undefined) return (await claimAndAnswer(rt, read.claim, read.paid)) as Outcome;
      const identified = await identify(rt, request, match, requestId, read.paid.payer, read.identifier);
      if ('kind' in identified) return identified;
      return await answerIdentified(rt, read.claim, read.paid, identified);
    } catch (error) {
      // Nothing a client sends may produce a 500; an unexpected failure answers 503 (fail closed).
      logger?.error({ err: error, requestId }, 'payment gate failed');
      return respond(errorResponse('internal_error', requestId, 'the payment could not be processed'));
    }
  }

  /** Reports a matched request's outcome: `onVerified` for a payment let through, `onFailed` for a refusal. */
  function reported(event: GateEvent, outcome: Outcome): Outcome {
    if (outcome.kind === 'proceed') {
      if (hooks.onVerified) safeHook(rt, () => hooks.onVerified?.({ ...event, payment: outcome.payment }));
    } else if (outcome.kind === 'respond' && outcome.response.status >= 400 && hooks.onFailed) {
      const { status, body } = outcome.response;
      safeHook(rt, () => hooks.onFailed?.({ ...event, status, code: codeOfBody(body) }));
    }
    return outcome;
  }

  // 5. Settle after the handler (or release): the `proceed` outcome's own; `finish`/`release` find it.
  return {
    handle,
    async finish(payment, response) {
      const proceeding = open.get(payment);
      if (!proceeding) return handlerAnswer(response);
      open.delete(payment);
      return proceeding.settle(response);
    },
    async release(payment) {
      const proceeding = open.get(payment);
      open.delete(payment);
      await proceeding?.release();
    },
    isPaid(method, target) {
      const upper = method.toUpperCase();
      if (upper === 'OPTIONS') return false;
      if (table.match(upper, target) !== undefined) return true;
      return config.otherMethods !== 'pass' && table.methodsFor(target).length > 0;
    },
    routes: table,
    ledger: config.store,
    reconciler,
    readiness: () => checkReadiness(config),
    async close() {
      reconciler.stop();
      ledger.leases.stop();
    },
  };
}
