// Gate step 2 of 8, in place of read-payment to proceed: a request signed in with a proof instead of a payment (after admit; the handler runs next, nothing is settled).
import { TollboothError } from '../errors/tollbooth-error';
import type { AccessStore } from '../ledger/access-types';
import { LEDGER_ERROR_STATUS } from '../ledger/types';
import { checkProof } from '../sign-in/check-proof';
import { readSignInProof } from '../sign-in/proof';
import type { Admitted } from './admit';
import { errorResponse, handlerAnswer, respond } from './responses';
import { type GateRuntime, refuseMalformed, reject, safeHook } from './runtime';
import type { Outcome, SignedInRequest } from './types';

/**
 * A request carrying a `SIGN-IN-WITH-X` proof at a sign-in route (docs/sign-in-with-x.md): the
 * proof is read (400 when it is none), checked (402 with a fresh challenge and the reason), its
 * nonce claimed once across instances, then one use of the signer's access to exactly this route,
 * network and signer is taken. The handler runs without payment; a handler that fails (or throws)
 * gives the use back. Nothing is settled.
 */
export async function signIn(rt: GateRuntime, admitted: Admitted, header: string): Promise<Outcome> {
  const { match, requestId, request } = admitted;
  const route = match.route;
  const config = route.signIn!;
  const store = rt.store as AccessStore;
  let proof: ReturnType<typeof readSignInProof>;
  try {
    proof = readSignInProof(header, rt.settings.maxPaymentHeaderBytes);
  } catch (error) {
    if (!(error instanceof TollboothError)) throw error;
    return refuseMalformed(rt, match, requestId, error.code, error.message);
  }
  let checked: Awaited<ReturnType<typeof checkProof>>;
  try {
    checked = await checkProof(config, route.key, proof);
  } catch (error) {
    rt.logger?.error({ err: error, requestId }, 'sign-in signature could not be checked');
    return respond(errorResponse('internal_error', requestId, 'the sign-in could not be checked'));
  }
  if (!checked.ok) return reject(rt, match, requestId, checked.code, checked.message);
  const now = rt.now();
  let claimed: boolean;
  let grant: Awaited<ReturnType<AccessStore['useAccess']>>;
  try {
    // Claimed before the use: of ten requests carrying one proof, one goes on.
    claimed = await store.claimNonce(proof.nonce, checked.nonceExpiresAt);
    grant = claimed
      ? await store.useAccess({
          route: route.key,
          network: checked.network,
          payer: checked.signer,
          at: now,
          keepUntil: now + rt.settings.retentionMs,
        })
      : undefined;
  } catch (error) {
    rt.logger?.error({ err: error, requestId }, 'sign-in access could not be looked up');
    return respond(errorResponse('ledger_unavailable', requestId));
  }
  if (!claimed) return reject(rt, match, requestId, 'sign_in_nonce_used', 'this proof was used already');
  if (!grant) {
    return reject(
      rt,
      match,
      requestId,
      'sign_in_no_access',
      `${checked.signer} holds no access to ${route.key} on ${checked.network} now`,
    );
  }
  const access = grant;
  const payment: SignedInRequest = {
    via: 'sign-in',
    requestId,
    route: route.key,
    resource: match.resourceUrl,
    identity: access.payment,
    payer: checked.signer,
    access,
  };
  rt.logger?.info?.(
    {
      requestId,
      route: route.key,
      payer: checked.signer,
      payment: access.payment,
      used: access.used,
      ...(access.uses === undefined ? {} : { uses: access.uses }),
      ...(access.validUntil === undefined ? {} : { validUntil: new Date(access.validUntil).toISOString() }),
    },
    'signed-in access',
  );
  let open = true;
  const giveBack = async (status: number | undefined) => {
    try {
      await store.returnAccess(access.payment);
    } catch (error) {
      rt.logger?.warn(
        { err: error, requestId, payment: access.payment },
        'sign-in use could not be given back',
      );
    }
    safeHook(rt, () => rt.hooks.onReleased?.(payment, status, request));
  };
  return {
    kind: 'proceed',
    payment,
    async settle(response) {
      const answer = handlerAnswer(response);
      if (open) {
        open = false;
        if (answer.status >= LEDGER_ERROR_STATUS) await giveBack(answer.status);
      }
      return answer;
    },
    async release() {
      if (!open) return;
      open = false;
      await giveBack(undefined);
    },
  };
}
