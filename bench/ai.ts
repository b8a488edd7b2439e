// The AI resources' deterministic answers: CPU per answer of each handler, from the upstream's
// response texts (parsed as the client parses them) to the response body's JSON text, on the
// simulator's data. No model and no network inside the measured loop: the upstream bodies are
// fetched from the simulator once and replayed.

import { loadConfig } from '../examples/fee-service/src/config/load';
import { analyst } from '../examples/fee-service/src/resources/ai/analyst/resource';
import { chat } from '../examples/fee-service/src/resources/ai/chat/resource';
import { explainBlock } from '../examples/fee-service/src/resources/ai/explain-block/resource';
import { explainTransaction } from '../examples/fee-service/src/resources/ai/explain-transaction/resource';
import { feeAdvice } from '../examples/fee-service/src/resources/ai/fee-advice/resource';
import type { ChainReader } from '../examples/fee-service/src/resources/ai/shared/chain';
import type { AnyResource, ResourceEnvironment } from '../examples/fee-service/src/resources/kit';
import { startMempoolSimulator } from '../examples/fee-service/src/simulator/server';
import { createSnapshotService } from '../examples/fee-service/src/snapshot/service';
import { UpstreamNotFoundError } from '../examples/fee-service/src/upstreams/errors';
import { createMempoolSpaceClient } from '../examples/fee-service/src/upstreams/mempool-space';
import {
  BlockSummariesWire,
  BlockTxSummariesWire,
  EsploraBlockWire,
  EsploraTxWire,
  parseHashBody,
  parseJsonBody,
  parseRawHexBody,
} from '../examples/fee-service/src/upstreams/wire';
import type { BenchConfig } from './lib/config';
import { type Spread, spread } from './lib/stats';

/** Targets of the issue: each deterministic answer ≤ 5 ms of CPU, the analyst ≤ 25 ms. */
export const AI_TARGET_MS = 5;
export const ANALYST_TARGET_MS = 25;

export interface AiCase {
  id: string;
  label: string;
  targetMs: number;
  /** CPU ms per answer, median and range over the rounds. */
  cpuMs: Spread;
  /** Bytes of the answer's JSON. */
  bytes: number;
  answersPerRound: number;
}

export interface AiSectionResult {
  seed: number;
  /** What was explained: the simulator's block and transaction. */
  data: { blockHeight: number; blockTxCount: number; txid: string; txInputs: number; txOutputs: number };
  cases: AiCase[];
}

const call = (operation: string) => ({ upstream: 'mempool-space', operation });

/** A chain reader that answers from recorded upstream texts, parsing them as the real client does. */
function replayReader(texts: Map<string, string>): ChainReader {
  const text = (path: string) => {
    const body = texts.get(path);
    if (body === undefined) throw new UpstreamNotFoundError(call(`GET ${path}`), 'Not Found');
    return body;
  };
  return {
    fetchTransaction: async (txid) => parseJsonBody(call('tx'), text(`/api/tx/${txid}`), EsploraTxWire),
    fetchTransactionHex: async (txid) => parseRawHexBody(call('hex'), text(`/api/tx/${txid}/hex`)),
    fetchCpfp: async (txid) => {
      throw new UpstreamNotFoundError(call(`GET /api/v1/cpfp/${txid}`), 'Not Found');
    },
    fetchBlock: async (hash) => parseJsonBody(call('block'), text(`/api/block/${hash}`), EsploraBlockWire),
    fetchRecentBlocks: async (height) =>
      parseJsonBody(call('blocks'), text(`/api/v1/blocks/${height}`), BlockSummariesWire),
    fetchBlockHash: async (height) => parseHashBody(call('hash'), text(`/api/block-height/${height}`)),
    fetchBlockTxSummaries: async (hash) =>
      parseJsonBody(call('summary'), text(`/api/v1/block/${hash}/summary`), BlockTxSummariesWire),
    fetchReplacement: async () => undefined,
  } as ChainReader;
}

export async function runAiSection(
  config: BenchConfig,
  log: (line: string) => void,
): Promise<AiSectionResult> {
  const seed = 11;
  const simulator = await startMempoolSimulator({ seed });
  try {
    const client = createMempoolSpaceClient({ baseUrl: simulator.url });
    const snapshots = createSnapshotService({ upstream: client });
    await snapshots.poll();
    const get = async (path: string) => (await fetch(`${simulator.url}${path}`)).text();
    const height = Number(await get('/api/blocks/tip/height'));
    const hash = await get(`/api/block-height/${height}`);
    const mempoolTxids = JSON.parse(await get('/api/mempool/txids')) as string[];
    const texts = new Map<string, string>();
    const record = async (path: string) => texts.set(path, await get(path));
    // The largest of the first mempool transactions: the explainer's cost grows with inputs and outputs.
    let txid = mempoolTxids[0]!;
    let best = 0;
    for (const candidate of mempoolTxids.slice(0, 200)) {
      const hex = await get(`/api/tx/${candidate}/hex`);
      if (hex.length > best) {
        best = hex.length;
        txid = candidate;
      }
    }
    await Promise.all([
      record(`/api/tx/${txid}`),
      record(`/api/tx/${txid}/hex`),
      record(`/api/block/${hash}`),
      record(`/api/block-height/${height}`),
      record(`/api/v1/blocks/${height}`),
      record(`/api/v1/block/${hash}/summary`),
    ]);
    const tx = JSON.parse(texts.get(`/api/tx/${txid}`)!) as { vin: unknown[]; vout: unknown[] };
    const blockTxCount = (JSON.parse(texts.get(`/api/v1/blocks/${height}`)!) as { tx_count: number }[])[0]!
      .tx_count;
    const capabilities = {
      snapshots,
      bitcoin: { primary: 'mempool' as const, mempool: replayReader(texts) },
    };

    const question = (q: string) => ({ q });
    const cases: {
      id: string;
      label: string;
      resource: AnyResource;
      params?: object;
      query?: object;
      targetMs: number;
    }[] = [
      {
        id: 'transaction',
        label: `Transaction explainer (${tx.vin.length} in, ${tx.vout.length} out)`,
        resource: explainTransaction,
        params: { txid },
        targetMs: AI_TARGET_MS,
      },
      {
        id: 'block',
        label: `Block explainer (${blockTxCount.toLocaleString('en-US')} transactions)`,
        resource: explainBlock,
        params: { hash_or_height: String(height) },
        targetMs: AI_TARGET_MS,
      },
      {
        id: 'advice',
        label: 'Fee advice (urgency, amount, context)',
        resource: feeAdvice,
        query: { urgency: 'low', amount_btc: 0.005, context: 'utxo consolidation, taproot' },
        targetMs: AI_TARGET_MS,
      },
      {
        id: 'chat',
        label: 'Chat (knowledge base + live figures)',
        resource: chat,
        query: question('How do I speed up a stuck transaction when fees are high?'),
        targetMs: AI_TARGET_MS,
      },
      {
        id: 'analyst',
        label: 'Analyst (4 steps: transaction, preview, decision, fee advice)',
        resource: analyst,
        query: question(`What fee should I pay, should I send now, and why is ${txid} waiting?`),
        targetMs: ANALYST_TARGET_MS,
      },
    ];
    // The service's own defaults (the analyst reads its step budget from them); the handlers read
    // the capabilities passed beside it, not the deployment's.
    const env: ResourceEnvironment = {
      config: loadConfig({}),
      baseUrl: 'http://bench.test',
      capabilities: {},
    };
    const answer = async (c: (typeof cases)[number]) => {
      const result = await c.resource.handler!({
        request: {} as never,
        requestId: 'bench',
        payment: undefined,
        input: { params: c.params ?? {}, query: c.query ?? {}, body: {} },
        capabilities,
        env,
        fail: (code: string) => {
          throw new Error(`${c.id} answered ${code}`);
        },
      } as never);
      if (result.status !== 200) throw new Error(`${c.id} answered ${result.status}`);
      return JSON.stringify(result.body);
    };
    const rounds = config.quick ? 2 : Math.max(3, config.rounds);
    const perRound = config.quick ? 20 : 200;
    const samples = new Map<string, number[]>(cases.map((c) => [c.id, []]));
    const bytes = new Map<string, number>();
    for (const c of cases) {
      for (let i = 0; i < perRound; i += 1) bytes.set(c.id, (await answer(c)).length); // warm-up
    }
    for (let round = 0; round < rounds; round += 1) {
      // Interleaved: each round runs every case once, so load that drifts moves them alike.
      for (const c of cases) {
        const before = process.cpuUsage();
        for (let i = 0; i < perRound; i += 1) await answer(c);
        const used = process.cpuUsage(before);
        samples.get(c.id)!.push((used.user + used.system) / 1000 / perRound);
      }
      log(`  AI answers: round ${round + 1}/${rounds}`);
    }
    return {
      seed,
      data: { blockHeight: height, blockTxCount, txid, txInputs: tx.vin.length, txOutputs: tx.vout.length },
      cases: cases.map((c) => ({
        id: c.id,
        label: c.label,
        targetMs: c.targetMs,
        cpuMs: spread(samples.get(c.id)!),
        bytes: bytes.get(c.id)!,
        answersPerRound: perRound,
      })),
    };
  } finally {
    await simulator.close();
  }
}
