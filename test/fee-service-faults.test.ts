// Issue 22 part 3 and issue 23 part 1: the fee service in its production wiring — an external
// facilitator (FACILITATOR_URL, here the kit's fault proxy in front of an honest facilitator) and
// its own chain reader (RPC_URL, the kit's devnet) — passes every fault audit: each payment is
// charged at most once on chain and the retried exact payload is served. Without RPC_URL the same
// service leaves a settlement whose answer was lost unresolved (the audit fails), which is what
// shows RPC_URL is what resolves it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type AuditResult,
  FAULT_AUDITS,
  type FaultAudit,
  type FaultKit,
  runFaultAudits,
  startFaultKit,
} from '@tollbooth/conformance';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../examples/fee-service/src/config';
import { type RunningFeeService, startFeeService } from '../examples/fee-service/src/service';

const scratch = mkdtempSync(join(tmpdir(), 'fee-service-faults-'));
let kit: FaultKit;
let counter = 0;

beforeAll(async () => {
  kit = await startFaultKit({ slowSupportedMs: 2_000 });
});
afterAll(async () => {
  await kit?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

async function feeService(env: Record<string, string>): Promise<RunningFeeService> {
  counter += 1;
  const { chain } = kit;
  return startFeeService(
    loadConfig({
      PORT: '0',
      LOG_LEVEL: 'silent',
      LEDGER_URL: `sqlite:${join(scratch, `ledger-${counter}.sqlite`)}`,
      OBSERVATORY_ENABLED: 'false',
      SIMULATOR_HISTORY_HOURS: '0',
      RATE_LIMIT_ENABLED: 'false',
      FACILITATOR_URL: kit.facilitatorUrl,
      FACILITATOR_TIMEOUT_MS: '1000',
      FACILITATOR_SETTLE_TIMEOUT_MS: '2000',
      NETWORK: `eip155:${chain.chainId}`,
      ASSET: chain.token.address,
      ASSET_NAME: chain.token.name,
      ASSET_VERSION: chain.token.version,
      PAY_TO: chain.payTo,
      ...env,
    }),
  );
}

function audit(service: RunningFeeService, audits: readonly FaultAudit[]): Promise<AuditResult[]> {
  return runFaultAudits(
    { url: service.url, paidPath: '/api/v1/fees/now' },
    {
      chain: { ...kit.chain, unknownTransactionWaitMs: 1_000 },
      faults: kit.proxy,
      audits,
      recoveryMs: 8_000,
      requestTimeoutMs: 15_000,
    },
  );
}

it('with FACILITATOR_URL and RPC_URL the fee service passes every fault audit, each payer charged once on chain', async () => {
  const service = await feeService({ RPC_URL: kit.chain.rpcUrl });
  try {
    const results = await audit(service, FAULT_AUDITS);
    expect(results.filter((r) => r.status !== 'passed')).toEqual([]);
    expect(results.map((r) => r.id)).toEqual(FAULT_AUDITS.map((a) => a.id));
    // Every settlement the ledger holds is one transfer on chain, and none is left unresolved.
    const entries = await service.ledger.query({ limit: 100 });
    expect(entries.filter((e) => e.state !== 'settled').map((e) => `${e.id} ${e.state}`)).toEqual([]);
    expect(new Set(entries.map((e) => e.transaction)).size).toBe(entries.length);
  } finally {
    await service.close();
  }
}, 120_000);

it('without RPC_URL a lost settle answer is not resolved, though each retry reaches the facilitator again: the chain reader is what serves the payer', async () => {
  const service = await feeService({});
  try {
    const lost = FAULT_AUDITS.filter((a) => a.fault.mode === 'settle-answer-dropped');
    const settlesBefore = kit.proxy.stats().forwarded.settle;
    const [result] = await audit(service, lost);
    expect(result?.status, result?.message).toBe('failed');
    expect(result?.message).toMatch(
      /not served within .* last 502: \{"error":\{"code":"settlement_uncertain"/,
    );
    // The first settle (its answer dropped), then the retries: the facilitator refuses the used authorization.
    expect(kit.proxy.stats().forwarded.settle - settlesBefore).toBeGreaterThan(2);
  } finally {
    await service.close();
  }
}, 60_000);

it('refuses to start when RPC_URL serves another chain than NETWORK, and starts in production with the right one', async () => {
  // The facilitator's /supported is asked first (it settles only the kit's chain), so a NETWORK
  // the kit's node does not serve is refused there; the node's own chain check is the evm
  // package's (create-exact-evm-facilitator.test.ts).
  await expect(feeService({ RPC_URL: kit.chain.rpcUrl, NETWORK: 'eip155:84532' })).rejects.toThrow(
    /eip155:84532/,
  );
  const production = await feeService({
    RPC_URL: kit.chain.rpcUrl,
    PROFILE: 'production',
    METRICS_TOKEN: 'metrics-0123456789abcdef',
  });
  try {
    expect(await production.gate.readiness()).toMatchObject({
      ready: true,
      chain: { [`eip155:${kit.chain.chainId}`]: { ok: true } },
    });
  } finally {
    await production.close();
  }
});
