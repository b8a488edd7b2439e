import type { IncomingMessage, ServerResponse } from 'node:http';
import { lookupTransaction } from './lookup';
import { evaluateTransaction } from './mempool-policy';
import type { SimulationModel } from './model';
import { blockWithExtras, esploraBlock, esploraTx, recentEntry } from './views';

const FEE_PATHS = ['/api/v1/fees/', '/api/mempool', '/api/fee-estimates'];
const HEX64 = /^[0-9a-f]{64}$/;
/** Esplora pages a block's transactions 25 at a time. */
const TXS_PAGE = 25;

export type Send = (
  res: ServerResponse,
  status: number,
  body: unknown,
  headers?: Record<string, string>,
) => void;

/** How the REST dialects write a broadcast refusal: mempool.space's two text forms. */
export type BroadcastErrorFormat = 'json' | 'code';

export interface RestContext {
  model: SimulationModel;
  send: Send;
  readBody(req: IncomingMessage): Promise<string>;
  errorFormat(): BroadcastErrorFormat;
}

function recentBlocks(model: SimulationModel, height: number) {
  const out = [];
  for (let h = height; h > height - 15; h -= 1) {
    const block = model.blockByHeight(h);
    if (!block) break;
    out.push(blockWithExtras(block));
  }
  return out;
}

/**
 * The mempool.space REST and Esplora dialects (Esplora's paths are under `/api`), with their
 * bodies and errors as the real services write them: text errors (`Transaction not found`,
 * `Block not found`, `Invalid hex string`), the 203 of `/fee-estimates`, 503 `Service Unavailable`
 * while the fee backend is down, and both broadcast error forms.
 */
export async function handleRest(ctx: RestContext, req: IncomingMessage, res: ServerResponse, path: string) {
  const { model, send } = ctx;
  if (model.params.feesDown && FEE_PATHS.some((p) => path.startsWith(p))) {
    return send(res, 503, 'Service Unavailable');
  }
  if (req.method === 'POST' && path === '/api/tx') {
    const verdict = evaluateTransaction(model, await ctx.readBody(req));
    if (verdict.ok === false) {
      const text =
        ctx.errorFormat() === 'json'
          ? `sendrawtransaction RPC error: ${JSON.stringify({ code: verdict.code, message: verdict.message })}`
          : `sendrawtransaction RPC error ${verdict.code}: ${verdict.message}`;
      return send(res, 400, text);
    }
    if (verdict.ok === true) model.addExternal(verdict.material, verdict.replaced);
    return send(res, 200, verdict.material.txid);
  }
  if (req.method !== 'GET') return send(res, 404, 'Not Found');
  switch (path) {
    case '/api/v1/fees/recommended':
      return send(res, 200, model.recommendedFees(false));
    case '/api/v1/fees/precise':
      return send(res, 200, model.recommendedFees(true));
    case '/api/v1/fees/mempool-blocks':
      return send(res, 200, model.mempoolBlocks());
    case '/api/mempool':
      return send(res, 200, model.mempoolInfo());
    case '/api/mempool/recent':
      return send(
        res,
        200,
        model.recentArrivals().map((tx) => recentEntry(model.materialize(tx))),
      );
    case '/api/mempool/txids':
      return send(
        res,
        200,
        model.sortedMempool().map((tx) => model.txidOfTx(tx)),
      );
    case '/api/fee-estimates':
      // deprecated on mempool.space, still served: 203 Non-Authoritative Information
      return send(res, 203, model.feeEstimates());
    case '/api/blocks/tip/height':
      return send(res, 200, String(model.tipHeight()));
    case '/api/blocks/tip/hash':
      return send(res, 200, model.tip().hash);
    case '/api/v1/blocks':
      return send(res, 200, recentBlocks(model, model.tipHeight()));
  }
  let match = /^\/api\/v1\/blocks\/(\d+)$/.exec(path);
  if (match) {
    const height = Number(match[1]);
    if (height > model.tipHeight()) return send(res, 400, { error: 'Block height is above the tip' });
    return send(res, 200, recentBlocks(model, height));
  }
  match = /^\/api\/block\/([^/]+)(\/txids|\/txs(?:\/(\d+))?)?$/.exec(path);
  if (match) {
    const hash = match[1]!;
    if (!HEX64.test(hash)) return send(res, 400, 'Invalid hex string');
    const block = model.findBlock(hash);
    if (!block) return send(res, 404, 'Block not found');
    if (!match[2]) return send(res, 200, esploraBlock(block));
    if (block.txs.length === 0 && block.txCount > 1) return send(res, 404, 'Block not found');
    const txs = model.blockTransactions(block);
    if (match[2] === '/txids')
      return send(
        res,
        200,
        txs.map((tx) => tx.txid),
      );
    const start = Number(match[3] ?? 0);
    if (start % TXS_PAGE !== 0) return send(res, 400, 'start index must be a multipication of 25');
    if (start >= txs.length) return send(res, 400, 'start index out of range');
    const place = { block: { height: block.height, hash: block.hash, timeMs: block.timestampMs } };
    return send(
      res,
      200,
      txs.slice(start, start + TXS_PAGE).map((tx) => esploraTx(tx, place)),
    );
  }
  match = /^\/api\/v1\/block\/([^/]+)\/summary$/.exec(path);
  if (match) {
    // mempool.space's compact view of a block's transactions (its block overview reads it).
    const hash = match[1]!;
    if (!HEX64.test(hash)) return send(res, 400, 'Invalid hex string');
    const block = model.findBlock(hash);
    if (!block || (block.txs.length === 0 && block.txCount > 1)) return send(res, 404, 'Block not found');
    return send(
      res,
      200,
      model.blockTransactions(block).map((tx) => ({
        txid: tx.txid,
        fee: tx.fee,
        vsize: tx.vsize,
        value: Number(tx.outputs.reduce((sum, o) => sum + o.value, 0n)),
        rate: tx.vsize === 0 ? 0 : Math.round((tx.fee / tx.vsize) * 1000) / 1000,
      })),
    );
  }
  match = /^\/api\/block-height\/(\d+)$/.exec(path);
  if (match) {
    const block = model.blockByHeight(Number(match[1]));
    return block ? send(res, 200, block.hash) : send(res, 404, 'Block not found');
  }
  match = /^\/api\/v1\/tx\/([^/]+)\/rbf$/.exec(path);
  if (match) {
    if (!HEX64.test(match[1]!)) return send(res, 400, 'Invalid hex string');
    return send(res, 200, model.index.rbfHistory(match[1]!));
  }
  match = /^\/api\/tx\/([^/]+)(\/hex|\/status)?$/.exec(path);
  if (match) {
    const txid = match[1]!;
    if (!HEX64.test(txid)) return send(res, 400, 'Invalid hex string');
    const found = lookupTransaction(model, txid);
    if (!found) return send(res, 404, 'Transaction not found');
    if (match[2] === '/hex') return send(res, 200, found.material.hex);
    const tx = esploraTx(found.material, found.place);
    return send(res, 200, match[2] === '/status' ? tx.status : tx);
  }
  return send(res, 404, 'Not Found');
}
