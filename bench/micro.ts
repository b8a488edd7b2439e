// Section 3 (and the ledger part of section 4): micro-benchmarks of the gate's paid-path pieces,
// in µs per operation: the median of repeated batches (performance.now for wall time,
// process.cpuUsage for CPU), after one warm-up batch.
import {
  AnyPaymentPayload,
  createMemoryLedgerStore,
  createPaymentGate,
  decodeHeaderJson,
  decodePaymentHeader,
  readWellFormedPayload,
} from '@tollbooth/core';
import {
  createExactEvmScheme,
  hashTransferAuthorization,
  preVerifyExactEvmPayment,
  type RecoveryBackend,
  recoverSignerAddress,
} from '@tollbooth/evm';
import type { BenchConfig } from './lib/config';
import { benchRoutes, createInstantFacilitator, HELLO_PATH, PAID_PATH } from './lib/fixtures';
import { type MicroResult, type MicroSectionResult, measure, PAID_OPS, PAID_WARMUP_OPS } from './lib/measure';
import { claimAndFinish, entryFor, paidPathOp, RESPONSE, viewOf } from './lib/paid-path';
import type { PaymentPool } from './lib/payments';
import { durableStores } from './micro-stores';

export async function runMicroSection(
  config: BenchConfig,
  pool: PaymentPool,
  log: (line: string) => void,
): Promise<MicroSectionResult> {
  const results: MicroResult[] = [];
  const notes: string[] = [];
  const batches = config.batches;
  const add = (r: MicroResult) => {
    results.push(r);
    log(
      `  ${r.group} / ${r.name}: ${r.wallUs.median.toFixed(2)} µs wall, ${r.cpuUs.median.toFixed(2)} µs CPU`,
    );
  };
  const header = pool.headers[0]!;
  const payload = pool.payloads[0]!;
  const requirement = payload.accepted;
  const json = decodeHeaderJson(header);
  const auth = payload.payload['authorization'] as Parameters<
    typeof hashTransferAuthorization
  >[0]['authorization'];
  const signature = payload.payload['signature'] as `0x${string}`;
  const domain = {
    name: 'USD Coin',
    version: '2',
    chainId: 8453,
    verifyingContract: requirement.asset as `0x${string}`,
  };
  const digest = hashTransferAuthorization({ domain, authorization: auth });
  const now = Math.floor(Date.now() / 1000);

  // -- the pieces, in the order the gate runs them ------------------------------------------------
  add(
    await measure('paid path pieces', 'header decode (base64 + UTF-8 + JSON.parse)', 2000, batches, () =>
      decodeHeaderJson(header),
    ),
  );
  add(
    await measure('paid path pieces', 'schema check (zod, x402 payload)', 2000, batches, () =>
      AnyPaymentPayload.parse(json),
    ),
  );
  add(
    await measure(
      'paid path pieces',
      'schema check (hand-written, what the gate runs)',
      2000,
      batches,
      () => {
        if (!readWellFormedPayload(json)) throw new Error('the bench payload is not well formed');
      },
    ),
  );
  add(
    await measure(
      'paid path pieces',
      'decodePaymentHeader (decode + the hand-written check)',
      2000,
      batches,
      () => decodePaymentHeader(header),
    ),
  );
  add(
    await measure('paid path pieces', 'EIP-712 digest of the authorization', 2000, batches, () =>
      hashTransferAuthorization({ domain, authorization: auth }),
    ),
  );
  for (const backend of ['native', 'noble'] as RecoveryBackend[]) {
    const ops = backend === 'native' ? 500 : 20;
    add(
      await measure('signature recovery', `recoverSignerAddress, ${backend}`, ops, batches, () => {
        if (!recoverSignerAddress({ hash: digest, signature, backend })) throw new Error('no signer');
      }),
    );
    add(
      await measure('signature recovery', `preVerify (whole scheme check), ${backend}`, ops, batches, () => {
        const r = preVerifyExactEvmPayment({ payload, requirements: requirement, now, backend });
        if (!r.ok) throw new Error(r.message);
      }),
    );
  }

  // -- the memory ledger ---------------------------------------------------------------------------
  {
    const store = createMemoryLedgerStore({ purgeIntervalMs: 0 });
    add(
      await measure(
        'ledger',
        'memory store: claim + 3 state changes (one paid request)',
        2000,
        batches,
        (i) => claimAndFinish(store, entryFor(payload, requirement, `m:${i}`)),
      ),
    );
    await store.close();
  }

  // -- the whole gate, in process ------------------------------------------------------------------
  for (const backend of ['native', 'noble'] as RecoveryBackend[]) {
    const gate = createPaymentGate({
      routes: benchRoutes(),
      schemes: [createExactEvmScheme({ recoveryBackend: backend })],
      facilitator: createInstantFacilitator(),
    });
    const native = backend === 'native';
    add(
      await measure(
        'gate, in process',
        `paid path: handle + finish, instant facilitator, ${backend} recovery`,
        native ? PAID_OPS : 20,
        batches,
        paidPathOp(gate, pool.headers),
        undefined,
        native ? PAID_WARMUP_OPS : 20,
      ),
    );
    await gate.ledger.close();
  }
  {
    const gate = createPaymentGate({
      routes: benchRoutes(),
      schemes: [createExactEvmScheme()],
      facilitator: createInstantFacilitator(),
    });
    add(
      await measure('gate, in process', '402 path: handle without payment', 2000, batches, async () => {
        const o = await gate.handle(viewOf(PAID_PATH));
        if (o.kind !== 'respond' || o.response.status !== 402) throw new Error('expected 402');
      }),
    );
    add(
      await measure(
        'gate, in process',
        'pass-through: isPaid of an unpaid route (what adapters call)',
        5000,
        batches,
        () => {
          if (gate.isPaid('GET', HELLO_PATH)) throw new Error('expected unpaid');
        },
      ),
    );
    add(
      await measure(
        'gate, in process',
        'pass-through: handle of an unpaid route',
        2000,
        batches,
        async () => {
          const o = await gate.handle(viewOf(HELLO_PATH));
          if (o.kind !== 'pass') throw new Error('expected pass');
        },
      ),
    );
    // Replay: the same settled payment again (decode, schema, pre-verify, ledger lookup).
    const replay = pool.headers[pool.headers.length - 1]!;
    const first = await gate.handle(viewOf(PAID_PATH, { 'payment-signature': replay }));
    if (first.kind !== 'proceed') throw new Error('replay seed was not accepted');
    await first.settle(RESPONSE);
    add(
      await measure(
        'gate, in process',
        'idempotent replay: handle of a settled payment',
        500,
        batches,
        async () => {
          const o = await gate.handle(viewOf(PAID_PATH, { 'payment-signature': replay }));
          if (o.kind !== 'replay') throw new Error(`expected replay, got ${o.kind}`);
        },
      ),
    );
    await gate.ledger.close();
  }

  // -- durable stores --------------------------------------------------------------------------------
  results.push(...(await durableStores(config, pool, notes, log)));
  return { results, notes };
}
