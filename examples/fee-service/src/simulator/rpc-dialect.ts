import type { IncomingMessage, ServerResponse } from 'node:http';
import { lookupTransaction, templateOf } from './lookup';
import { DEFAULT_MAX_FEE_RATE_SAT_VB, evaluateTransaction } from './mempool-policy';
import { type SimulationModel, subsidyAt } from './model';
import type { Send } from './rest-dialect';
import { witnessCommitment } from './transactions';
import type { SimBlock } from './types';
import { coreTx, esploraBlock, templateTransaction } from './views';

const btcPerKvb = (satPerVb: number) => Number((Math.round(satPerVb * 1000) / 1e8).toFixed(8));
const btc = (sats: number | bigint) => Number((Number(sats) / 1e8).toFixed(8));
/** A BTC/kvB parameter (Core's `maxfeerate`) in sat/vB. */
const satPerVb = (btcPerKvbValue: number) => (btcPerKvbValue * 1e8) / 1000;

export interface RpcContext {
  model: SimulationModel;
  send: Send;
  /** Consumes one injected warm-up fault if any: the call then answers -28. */
  takeWarmup(): boolean;
}

type Call = { id: unknown; params: unknown[]; fail(code: number, message: string, status?: number): void };

function blockHeader(model: SimulationModel, block: SimBlock) {
  const e = esploraBlock(block);
  const next = model.blockByHeight(block.height + 1);
  return {
    hash: block.hash,
    confirmations: model.tipHeight() - block.height + 1,
    height: block.height,
    version: e.version,
    versionHex: e.version.toString(16).padStart(8, '0'),
    merkleroot: block.merkleRoot,
    time: e.timestamp,
    mediantime: e.mediantime,
    nonce: block.nonce,
    bits: e.bits.toString(16),
    difficulty: e.difficulty,
    chainwork: '0'.repeat(64),
    nTx: block.txCount,
    previousblockhash: block.previousHash,
    ...(next ? { nextblockhash: next.hash } : {}),
  };
}

function blockStats(block: SimBlock) {
  const r = block.feeRange;
  const int = (x: number | undefined) => Math.floor(x ?? 0);
  return {
    avgfee: block.txCount > 1 ? Math.floor(block.totalFees / (block.txCount - 1)) : 0,
    avgfeerate: block.avgFeeRate,
    blockhash: block.hash,
    feerate_percentiles: [int(r[1]), int(r[2]), int(r[3]), int(r[4]), int(r[5])],
    height: block.height,
    ins: block.txs.reduce((s, t) => s + t.shape.inputs.length, 0),
    maxfeerate: int(r[6]),
    minfeerate: int(r[0]),
    outs: block.txs.reduce((s, t) => s + t.shape.outputs.length, 0) + 2,
    subsidy: block.subsidy,
    time: Math.floor(block.timestampMs / 1000),
    total_size: block.size,
    total_weight: block.weight,
    totalfee: block.totalFees,
    txs: block.txCount,
  };
}

/** The methods of Bitcoin Core's JSON-RPC the simulator answers, with Core's results and errors. */
function methods(ctx: RpcContext): Record<string, (call: Call) => unknown> {
  const { model } = ctx;
  const blockOf = (ref: unknown) =>
    typeof ref === 'number' ? model.blockByHeight(ref) : model.findBlock(String(ref));
  return {
    estimatesmartfee({ params, fail }) {
      const target = Number(params[0]);
      const mode = params[1] === undefined ? 'economical' : String(params[1]).toLowerCase();
      if (!Number.isInteger(target) || target < 1)
        return fail(-8, 'Invalid conf_target, must be between 1 and 1008');
      if (mode !== 'economical' && mode !== 'conservative' && mode !== 'unset')
        return fail(
          -8,
          'Invalid estimate_mode parameter, must be one of: "unset", "economical", "conservative"',
        );
      // Core answers for at least 2 blocks (a 1-block target reads as 2), from mined blocks
      const blocks = Math.min(1008, Math.max(2, target));
      const rate = model.smartFee(target, mode === 'conservative' ? 'conservative' : 'economical');
      return { feerate: btcPerKvb(rate), blocks };
    },
    getmempoolinfo() {
      const info = model.mempoolInfo();
      return {
        loaded: true,
        size: info.count,
        bytes: info.vsize,
        usage: Math.round(info.vsize * 2.6),
        total_fee: btc(info.total_fee),
        maxmempool: 300_000_000,
        mempoolminfee: btcPerKvb(model.params.minRelayFee),
        minrelaytxfee: btcPerKvb(model.params.minRelayFee),
        incrementalrelayfee: btcPerKvb(model.params.minRelayFee),
        unbroadcastcount: 0,
        fullrbf: true,
      };
    },
    getblockcount: () => model.tipHeight(),
    getbestblockhash: () => model.tip().hash,
    getblockhash({ params, fail }) {
      const block = model.blockByHeight(Number(params[0]));
      return block ? block.hash : fail(-8, 'Block height out of range');
    },
    getblockstats({ params, fail }) {
      const block = blockOf(params[0]);
      if (!block) {
        return typeof params[0] === 'number'
          ? fail(-8, 'Target block height after current tip')
          : fail(-5, 'Block not found');
      }
      return blockStats(block);
    },
    getblockheader({ params, fail }) {
      const block = model.findBlock(String(params[0]));
      return block ? blockHeader(model, block) : fail(-5, 'Block not found');
    },
    getblock({ params, fail }) {
      const block = model.findBlock(String(params[0]));
      if (!block) return fail(-5, 'Block not found');
      const verbosity = params[1] === undefined ? 1 : Number(params[1]);
      if (block.txs.length === 0 && block.txCount > 1) return fail(-1, 'Block not available (pruned data)');
      const txs = model.blockTransactions(block);
      if (verbosity === 0) return fail(-1, 'Block serialisation is not simulated; use verbosity 1 or 2');
      const place = { block: { height: block.height, hash: block.hash, timeMs: block.timestampMs } };
      return {
        ...blockHeader(model, block),
        strippedsize: Math.round(block.size - (4 * block.size - block.weight) / 3),
        size: block.size,
        weight: block.weight,
        tx:
          verbosity >= 2
            ? txs.map((tx) => ({ ...coreTx(tx, place, model.tipHeight()), fee: btc(tx.fee) }))
            : txs.map((tx) => tx.txid),
      };
    },
    getrawtransaction({ params, fail }) {
      const found = lookupTransaction(model, String(params[0]));
      if (!found) {
        return fail(
          -5,
          'No such mempool or blockchain transaction. Use gettransaction for wallet transactions.',
        );
      }
      const verbose = params[1] === true || (typeof params[1] === 'number' && params[1] > 0);
      return verbose ? coreTx(found.material, found.place, model.tipHeight()) : found.material.hex;
    },
    getrawmempool: ({ params }) =>
      params[0] === true
        ? Object.fromEntries(
            model
              .sortedMempool()
              .map((tx) => [model.txidOfTx(tx), { vsize: tx.vsize, fees: { base: btc(tx.fee) } }]),
          )
        : model.sortedMempool().map((tx) => model.txidOfTx(tx)),
    getmempoolentry({ params, fail }) {
      const found = model.findTx(String(params[0]));
      if (!found || found.block) return fail(-5, 'Transaction not in mempool');
      const { tx } = found;
      const material = model.materialize(tx);
      const depends = material.inputs
        .map((input) => model.findTx(input.txid))
        .filter((parent) => parent && !parent.block)
        .map((parent) => model.txidOfTx(parent!.tx));
      const spentby = model.index.descendantsIn(tx, model.mempool).map((child) => model.txidOfTx(child));
      return {
        vsize: tx.vsize,
        weight: tx.weight,
        time: Math.floor(tx.arrivalMs / 1000),
        height: model.tipHeight(),
        descendantcount: 1 + spentby.length,
        descendantsize: tx.vsize,
        ancestorcount: 1 + depends.length,
        ancestorsize: tx.vsize,
        wtxid: material.wtxid,
        fees: { base: btc(tx.fee), modified: btc(tx.fee), ancestor: btc(tx.fee), descendant: btc(tx.fee) },
        depends,
        spentby,
        'bip125-replaceable': tx.rbf,
        unbroadcast: false,
      };
    },
    gettxout({ params }) {
      const utxo = model.index.utxo(String(params[0]), Number(params[1]));
      if (!utxo) return null;
      return {
        bestblock: model.tip().hash,
        confirmations: utxo.height === null ? 0 : model.tipHeight() - utxo.height + 1,
        value: btc(utxo.value),
        scriptPubKey: { hex: Buffer.from(utxo.script).toString('hex') },
        coinbase: false,
      };
    },
    getblocktemplate() {
      const template = templateOf(model);
      const fees = template.reduce((sum, t) => sum + t.material.fee, 0);
      const height = model.tipHeight() + 1;
      const commitment = witnessCommitment(template.map((t) => t.material.wtxid));
      return {
        capabilities: ['proposal'],
        version: 0x20000000,
        rules: ['csv', '!segwit', 'taproot'],
        vbavailable: {},
        vbrequired: 0,
        previousblockhash: model.tip().hash,
        transactions: template.map((t) => templateTransaction(t.material, t.depends)),
        coinbaseaux: {},
        coinbasevalue: subsidyAt(height) + fees,
        longpollid: `${model.tip().hash}${template.length}`,
        target: '00000000000000000002a1730000000000000000000000000000000000000000',
        mintime: Math.floor(model.tip().timestampMs / 1000) - 2999,
        mutable: ['time', 'transactions', 'prevblock'],
        noncerange: '00000000ffffffff',
        sigoplimit: 80_000,
        sizelimit: 4_000_000,
        weightlimit: 4_000_000,
        curtime: Math.floor(model.nowMs / 1000),
        bits: '17029c4c',
        height,
        default_witness_commitment: `6a24aa21a9ed${Buffer.from(commitment).toString('hex')}`,
      };
    },
    testmempoolaccept({ params, fail }) {
      const hexes = Array.isArray(params[0]) ? params[0] : [];
      const max = params[1] === undefined ? DEFAULT_MAX_FEE_RATE_SAT_VB : satPerVb(Number(params[1]));
      if (hexes.length === 0) return fail(-8, 'Array must contain between 1 and 25 transactions.');
      return hexes.map((hex) => {
        const verdict = evaluateTransaction(model, String(hex), { maxFeeRateSatVb: max });
        if (verdict.ok === false && verdict.code === -22) {
          throw Object.assign(new Error(verdict.message), { rpcCode: -22 });
        }
        if (verdict.ok === true) {
          const { material } = verdict;
          return {
            txid: material.txid,
            wtxid: material.wtxid,
            allowed: true,
            vsize: material.vsize,
            fees: {
              base: btc(material.fee),
              'effective-feerate': btcPerKvb(material.fee / material.vsize),
              'effective-includes': [material.wtxid],
            },
          };
        }
        if (verdict.ok === 'known') {
          const { txid, wtxid } = verdict.material;
          return { txid, wtxid, allowed: false, 'reject-reason': 'txn-already-in-mempool' };
        }
        return {
          txid: verdict.txid,
          wtxid: verdict.wtxid,
          allowed: false,
          'reject-reason': verdict.rejectReason,
          // Core ≥ 29 adds the full message (the reason and its detail) beside the short reason
          'reject-details': verdict.message,
        };
      });
    },
    sendrawtransaction({ params, fail }) {
      const max = params[1] === undefined ? DEFAULT_MAX_FEE_RATE_SAT_VB : satPerVb(Number(params[1]));
      const verdict = evaluateTransaction(model, String(params[0] ?? ''), { maxFeeRateSatVb: max });
      if (verdict.ok === false) return fail(verdict.code, verdict.message);
      if (verdict.ok === true) model.addExternal(verdict.material, verdict.replaced);
      return verdict.material.txid;
    },
  };
}

/** Methods that answer while the node is warming up (`-28` for every other one). */
const DURING_WARMUP = new Set(['getblockcount', 'getbestblockhash', 'getblockhash']);

/**
 * Bitcoin Core's JSON-RPC: basic auth, JSON-RPC 1.0 envelopes, errors as HTTP 500 with
 * `{result: null, error: {code, message}, id}` (404 for an unknown method), -28 while warming up
 * (the `upstream-down` scenario, or an injected warm-up fault).
 */
export async function handleRpc(
  ctx: RpcContext,
  req: IncomingMessage,
  res: ServerResponse,
  auth: { user: string; password: string },
  body: () => Promise<string>,
) {
  const { send } = ctx;
  const expected = `Basic ${Buffer.from(`${auth.user}:${auth.password}`).toString('base64')}`;
  if (req.headers.authorization !== expected) {
    res.writeHead(401, { 'www-authenticate': 'Basic realm="jsonrpc"' });
    return res.end();
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(await body());
  } catch {
    return send(res, 500, { result: null, error: { code: -32700, message: 'Parse error' }, id: null });
  }
  const warming = ctx.model.params.feesDown || ctx.takeWarmup();
  // A batch (an array of calls) answers 200 with an array, each call's error in its place.
  if (Array.isArray(parsed)) {
    return send(
      res,
      200,
      parsed.map((call) => rpcCall(ctx, call as RpcRequest, warming).body),
    );
  }
  const reply = rpcCall(ctx, parsed as RpcRequest, warming);
  return send(res, reply.status, reply.body);
}

type RpcRequest = { id?: unknown; method?: unknown; params?: unknown } | null;

/** One call: the HTTP status Core would answer it with alone, and its envelope. */
function rpcCall(ctx: RpcContext, request: RpcRequest, warming: boolean): { status: number; body: unknown } {
  const id = request?.id ?? null;
  const method = String(request?.method);
  let failure: { status: number; body: unknown } | undefined;
  const fail = (code: number, message: string, status = 500) => {
    failure = { status, body: { result: null, error: { code, message }, id } };
  };
  if (warming && !DURING_WARMUP.has(method)) fail(-28, 'Loading block index…');
  const handler = methods(ctx)[method];
  if (!failure && !handler) fail(-32601, 'Method not found', 404);
  if (failure || !handler) return failure!;
  let result: unknown;
  try {
    result = handler({ id, params: Array.isArray(request?.params) ? request.params : [], fail });
  } catch (error) {
    const code = (error as { rpcCode?: number }).rpcCode ?? -1;
    fail(code, error instanceof Error ? error.message : String(error));
  }
  return failure ?? { status: 200, body: { result: result ?? null, error: null, id } };
}
