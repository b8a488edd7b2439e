// One paid request in process, for the micro-benchmarks and the scaling section: a ledger entry
// as the gate writes it, the ledger operations of one paid request, and the gate's paid path.
import type {
  createPaymentGate,
  LedgerEntry,
  LedgerStore,
  PaymentPayload,
  PaymentRequirements,
  RequestView,
} from '@tollbooth/core';
import { PAID_PATH } from './fixtures';

/** A ledger entry as the gate would write it for `payload`. */
export function entryFor(payload: PaymentPayload, requirement: PaymentRequirements, id: string): LedgerEntry {
  const now = Date.now();
  const auth = payload.payload['authorization'] as { from: string; validBefore: string };
  return {
    id,
    state: 'claimed',
    resource: `http://127.0.0.1${PAID_PATH}`,
    route: `GET ${PAID_PATH}`,
    network: requirement.network,
    payer: auth.from,
    payload,
    requirements: requirement,
    validBefore: Number(auth.validBefore),
    owner: `bench:${id}`,
    leaseUntil: now + 300_000,
    createdAt: now,
    updatedAt: now,
    expiresAt: Number(auth.validBefore) * 1000 + 86_400_000,
  };
}

export const RESPONSE = {
  status: 200,
  headers: { 'content-type': 'application/json', 'payment-response': 'eyJzdWNjZXNzIjp0cnVlfQ==' },
  body: Buffer.from('{"hello":"world"}'),
};

/**
 * How the ledger asks a store to commit a paid request's writes: `gate` as the gate does
 * (docs/ledger.md#durability: the claim and `verified` need not wait for the disk, `settling` and
 * `settled` do), `all-durable` every write waiting for the disk (the ledger before #38 part 5).
 */
export type LedgerDurability = 'gate' | 'all-durable';

/** Synchronous commits one paid request asks of a store: the writes not marked `durable: false`. */
export const SYNC_COMMITS_PER_REQUEST: Readonly<Record<LedgerDurability, number>> = {
  gate: 2,
  'all-durable': 4,
};

/**
 * claim, then verified → settling → settled (with the response): what one paid request does to
 * the ledger, with the durability the gate asks for (or, `all-durable`, every write durable).
 */
export async function claimAndFinish(
  store: LedgerStore,
  entry: LedgerEntry,
  durability: LedgerDurability = 'gate',
): Promise<void> {
  const relaxed = durability === 'gate' ? { durable: false } : undefined;
  const claimed = await store.claim(entry, relaxed);
  if (!claimed.acquired) throw new Error(`claim of ${entry.id} was not acquired`);
  const expect = { owner: entry.owner };
  if (!(await store.update(entry.id, { ...expect, state: ['claimed'] }, { state: 'verified' }, relaxed)))
    throw new Error('verified CAS failed');
  if (
    !(await store.update(
      entry.id,
      { ...expect, state: ['verified'] },
      { state: 'settling', response: RESPONSE },
    ))
  )
    throw new Error('settling CAS failed');
  if (
    !(await store.update(
      entry.id,
      { ...expect, state: ['settling'] },
      { state: 'settled', receipt: { success: true }, response: RESPONSE },
    ))
  )
    throw new Error('settled CAS failed');
}

/** A RequestView for a GET of `path`, with optional headers. */
export function viewOf(path: string, headers: Record<string, string> = {}): RequestView {
  return {
    method: 'GET',
    url: `http://127.0.0.1${path}`,
    header: (name) => headers[name.toLowerCase()],
  };
}

/** The in-process paid path: gate.handle (decode, schema, pre-verify, claim, verify) then the outcome's settle. */
export function paidPathOp(
  gate: ReturnType<typeof createPaymentGate>,
  headers: readonly string[],
  path = PAID_PATH,
) {
  return async (i: number) => {
    const header = headers[i];
    if (header === undefined) throw new Error('the payment pool is exhausted');
    const outcome = await gate.handle(viewOf(path, { 'payment-signature': header }));
    if (outcome.kind !== 'proceed') throw new Error(`expected proceed, got ${outcome.kind}`);
    const response = await outcome.settle(RESPONSE);
    if (response.status !== 200) throw new Error(`finish answered ${response.status}`);
  };
}
