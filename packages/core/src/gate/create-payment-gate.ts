import type { RequestView } from '../http/types';
import { SettlementLedger } from '../ledger/settlement-ledger';
import { createLedgerReconciler } from '../reconciler/reconciler';
import { SIGN_IN_HEADER } from '../sign-in/proof';
import { type Admitted, admissionRefusal, matchRequest, paymentHeaderOf, runPrecondition } from './admit';
import { AuthenticatedHeaders } from './authenticated-headers';
import { claimAndAnswer } from './claim';
import { parseGateOptions } from './config';
import { grantAccessFor, grantDeps } from './grant-access';
import { answerIdentified, identify } from './identified';
import type { PaymentGateOptions, TollboothGate } from './options';
import { type PaymentHeader, readPayment } from './read-payment';
import { checkReadiness } from './readiness';
import { challengeResponse, codeOfBody, errorResponse, respond } from './responses';
import { type GateRuntime, safeHook } from './runtime';
import { signIn } from './sign-in-step';
import type { GateEvent, Outcome } from './types';

export {
  type GateLogger,
  type GateReadiness,
  PAYMENT_GATE_DEFAULTS,
  type PaymentGateOptions,
  type TollboothGate,
} from './options';

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
      onTransfer: (event) => {
        // Settled by the reconciler: the access it bought is recorded too (no request waits on it).
        void grantAccessFor(grantDeps(rt), {
          id: event.id,
          route: event.route,
          network: event.network,
          payer: event.payer,
          transaction: event.transaction,
        });
        hooks.onTransfer?.(event);
      },
      onResolved: (entry, resolution) => hooks.onResolved?.(entry, resolution),
    },
  });
  reconciler.start();

  // 2. Admit: the paid route, its availability and canonical URL, its precondition, a payment header.
  async function handle(request: RequestView): Promise<Outcome> {
    const admitted = matchRequest(table, config.otherMethods, request);
    if (admitted.kind !== 'matched') return admitted;
    const { match, requestId } = admitted;
    const event: GateEvent = { requestId, request, route: match.route, resource: match.resourceUrl };
    if (hooks.onMatched) safeHook(rt, () => hooks.onMatched?.(event));
    const refused = admissionRefusal(request, match, requestId);
    if (refused) return reported(event, respond(refused));
    // No await (no promise, no microtask) for a route without a precondition, as most are.
    if (match.route.config.precondition) {
      const early = await runPrecondition(rt, request, match, requestId);
      if (early) return early.quiet ? respond(early.response) : reported(event, respond(early.response));
    }
    const header = paymentHeaderOf(request);
    const proof = match.route.signIn && !header ? request.header(SIGN_IN_HEADER) : undefined;
    if (proof !== undefined) return reported(event, await signInSafely(admitted, proof));
    if (!header) {
      const challenge = challengeResponse(match, requestId, 'payment_required');
      const sent = respond(config.paywall ? config.paywall.respond(request, challenge) : challenge);
      if (hooks.onChallenge) safeHook(rt, () => hooks.onChallenge?.({ ...event }));
      return sent;
    }
    return reported(event, await pay(request, admitted, header));
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

  /** A sign-in (docs/sign-in-with-x.md); an unexpected failure answers 503, never 500. */
  async function signInSafely(admitted: Admitted, proof: string): Promise<Outcome> {
    try {
      return await signIn(rt, admitted, proof);
    } catch (error) {
      logger?.error({ err: error, requestId: admitted.requestId }, 'sign-in failed');
      return respond(
        errorResponse('internal_error', admitted.requestId, 'the sign-in could not be processed'),
      );
    }
  }

  /** Reports a matched request's outcome: `onVerified` for a payment let through, `onFailed` for a refusal. */
  function reported(event: GateEvent, outcome: Outcome): Outcome {
    if (outcome.kind === 'proceed') {
      const payment = outcome.payment;
      if (payment.via === 'sign-in') {
        if (hooks.onSignedIn) safeHook(rt, () => hooks.onSignedIn?.({ ...event, payment }));
      } else if (hooks.onVerified) safeHook(rt, () => hooks.onVerified?.({ ...event, payment }));
    } else if (outcome.kind === 'respond' && outcome.response.status >= 400 && hooks.onFailed) {
      const { status, body } = outcome.response;
      safeHook(rt, () => hooks.onFailed?.({ ...event, status, code: codeOfBody(body) }));
    }
    return outcome;
  }

  // 5. Settle after the handler (or release): the `proceed` outcome's own `settle` / `release`.
  return {
    handle,
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
