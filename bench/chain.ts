// The chain-data resources' own cost: CPU per answer of the next block and the fee landscape built
// from a cached reading (the upstreams read once from the simulator through the real clients, as
// the service caches them), and the broadcast's local checks on a 1,000-input transaction (the
// body's JSON and schema, then the checks). No network inside the measured loops.
import { createHash } from 'node:crypto';
import * as btc from '@scure/btc-signer';
import { createBitcoinUpstreams } from '../examples/fee-service/src/capabilities/bitcoin';
import { buildFeeLandscape } from '../examples/fee-service/src/resources/fees/landscape/build';
import { fetchLandscapeData } from '../examples/fee-service/src/resources/fees/landscape/data';
import { buildNextBlock } from '../examples/fee-service/src/resources/mining/nextblock/build';
import { fetchNextBlockData } from '../examples/fee-service/src/resources/mining/nextblock/data';
import {
  createCachedReading,
  freshnessOf,
} from '../examples/fee-service/src/resources/shared/cached-reading';
import { inspectTransaction } from '../examples/fee-service/src/resources/transactions/broadcast/inspect';
import { BroadcastRequestSchema } from '../examples/fee-service/src/resources/transactions/broadcast/schema';
import { startMempoolSimulator } from '../examples/fee-service/src/simulator/server';
import type { BenchConfig } from './lib/config';
import { type Spread, spread } from './lib/stats';

/** Targets of the issue: landscape and next block ≤ 2 ms per answer, broadcast checks ≤ 1 ms. */
export const CHAIN_ANSWER_TARGET_MS = 2;
export const BROADCAST_CHECKS_TARGET_MS = 1;

export interface ChainCase {
  id: 'nextblock' | 'landscape' | 'broadcast-checks' | 'broadcast-body';
  label: string;
  targetMs: number;
  cpuMs: Spread;
  bytes: number;
  opsPerRound: number;
}

export interface ChainSectionResult {
  seed: number;
  data: {
    templateTxs: number;
    landscapeSources: number;
    histogramBuckets: number;
    broadcastInputs: number;
    broadcastVsize: number;
  };
  cases: ChainCase[];
}

/** A 1,000-input P2WPKH transaction with witnesses the size of real ones (72-byte signature, 33-byte key). */
function thousandInputTransaction(): string {
  const witness = [
    Uint8Array.of(
      0x30,
      0x44,
      0x02,
      0x20,
      ...new Uint8Array(32).fill(0x11),
      0x02,
      0x20,
      ...new Uint8Array(32).fill(0x22),
      0x01,
    ),
    Uint8Array.of(0x02, ...new Uint8Array(32).fill(0x33)),
  ];
  const inputs = Array.from({ length: 1_000 }, (_, i) => ({
    txid: createHash('sha256').update(`parent ${i}`).digest(),
    index: i % 4,
    finalScriptSig: new Uint8Array(0),
    sequence: 0xfffffffd,
  }));
  const script = btc.OutScript.encode({ type: 'wpkh', hash: new Uint8Array(20).fill(9) });
  return Buffer.from(
    btc.RawTx.encode({
      version: 2,
      segwitFlag: true,
      inputs,
      outputs: [{ amount: 90_000_000n, script }],
      witnesses: inputs.map(() => witness),
      lockTime: 0,
    }),
  ).toString('hex');
}

export async function runChainSection(
  config: BenchConfig,
  log: (line: string) => void,
): Promise<ChainSectionResult> {
  const seed = 42;
  const simulator = await startMempoolSimulator({ seed });
  try {
    const upstreams = createBitcoinUpstreams(
      {
        upstream: { kind: 'mempool', url: undefined, coreUser: undefined, corePassword: undefined },
        sources: { mempool: undefined, esplora: undefined, core: undefined },
      },
      simulator,
    );
    // One reading each, as the resources cache them for 10 s.
    const landscape = await createCachedReading({ fetch: () => fetchLandscapeData(upstreams) }).read();
    const nextblock = await createCachedReading({ fetch: () => fetchNextBlockData(upstreams) }).read();
    const hex = thousandInputTransaction();
    const inspected = inspectTransaction(hex);
    if (!inspected.ok) throw new Error(`the 1,000-input transaction fails its checks: ${inspected.code}`);
    const body = JSON.stringify({ hex });

    const cases: Array<{ id: ChainCase['id']; label: string; targetMs: number; op: () => number }> = [
      {
        id: 'nextblock',
        label: `Next block from a cached template (${nextblock.value.block.kind === 'template' ? nextblock.value.block.txs.length.toLocaleString('en-US') : '?'} transactions), to the answer's JSON`,
        targetMs: CHAIN_ANSWER_TARGET_MS,
        op: () => {
          const now = Date.now();
          const fresh = freshnessOf(nextblock, now, { tipHeight: nextblock.value.tip.height });
          return JSON.stringify(buildNextBlock(nextblock, fresh, now)).length;
        },
      },
      {
        id: 'landscape',
        label: `Fee landscape from a cached reading (${landscape.value.sources.length} sources), to the answer's JSON`,
        targetMs: CHAIN_ANSWER_TARGET_MS,
        op: () => {
          const fresh = freshnessOf(landscape, Date.now(), { tipHeight: landscape.value.tip_height });
          return JSON.stringify(buildFeeLandscape(landscape, fresh)).length;
        },
      },
      {
        id: 'broadcast-checks',
        label: `Broadcast local checks, 1,000 inputs (${inspected.tx.vsize.toLocaleString('en-US')} vB, ${(hex.length / 2 / 1024).toFixed(0)} KiB)`,
        targetMs: BROADCAST_CHECKS_TARGET_MS,
        op: () => {
          const result = inspectTransaction(hex);
          return result.ok ? result.tx.vsize : 0;
        },
      },
      {
        id: 'broadcast-body',
        label: 'The same with the body: JSON.parse, the body schema (hex characters), then the checks',
        // For reading only: the target is on the checks (the body's JSON is the framework's work).
        targetMs: Number.NaN,
        op: () => {
          const parsed = BroadcastRequestSchema.parse(JSON.parse(body));
          const result = inspectTransaction(parsed.hex);
          return result.ok ? result.tx.vsize : 0;
        },
      },
    ];
    const rounds = config.quick ? 2 : Math.max(3, config.rounds);
    const perRound = config.quick ? 20 : 200;
    const samples = new Map<string, number[]>(cases.map((c) => [c.id, []]));
    const bytes = new Map<string, number>();
    for (const c of cases) for (let i = 0; i < perRound; i += 1) bytes.set(c.id, c.op()); // warm-up
    for (let round = 0; round < rounds; round += 1) {
      // Interleaved: each round runs every case once, so load that drifts moves them alike.
      for (const c of cases) {
        const before = process.cpuUsage();
        for (let i = 0; i < perRound; i += 1) c.op();
        const used = process.cpuUsage(before);
        samples.get(c.id)!.push((used.user + used.system) / 1000 / perRound);
      }
      log(`  chain resources: round ${round + 1}/${rounds}`);
    }
    return {
      seed,
      data: {
        templateTxs: nextblock.value.block.kind === 'template' ? nextblock.value.block.txs.length : 0,
        landscapeSources: landscape.value.sources.length,
        histogramBuckets: landscape.value.mempool.histogram.length,
        broadcastInputs: inspected.tx.inputs.length,
        broadcastVsize: inspected.tx.vsize,
      },
      cases: cases.map((c) => ({
        id: c.id,
        label: c.label,
        targetMs: c.targetMs,
        cpuMs: spread(samples.get(c.id)!),
        bytes: c.id.startsWith('broadcast') ? hex.length / 2 : bytes.get(c.id)!,
        opsPerRound: perRound,
      })),
    };
  } finally {
    await simulator.close();
  }
}
