import * as btc from '@scure/btc-signer';
import { MEMPOOL_SIMULATOR_DEFAULTS } from './server';
import { createFaucet, FAUCET_OUTPUTS, type SpendableOutput, signFaucetSpend } from './wallet';

/** Options of {@link spendableTestTransaction}. */
export interface TestTransactionOptions {
  /** The simulator's base URL (its mempool.space dialect; Core JSON-RPC at `/`). */
  simulatorUrl: string;
  /** The simulator's seed: its faucet's key and outputs derive from it. Default 42 (`npm start`'s). */
  seed?: number;
  /** Fee rate, sat/vB. Default 2. */
  feeRate?: number;
  /** Core RPC credentials of the simulator. Default its own. */
  rpcUser?: string;
  rpcPassword?: string;
}

/** A signed transaction the simulator's node accepts, and what it spends and pays. */
export interface TestTransaction {
  hex: string;
  txid: string;
  vsize: number;
  fee_sat: number;
  fee_rate_sat_vb: number;
  /** The faucet output it spends. */
  spends: { txid: string; vout: number; value_sat: number };
  /** Where it pays (the faucet's own address: the coins stay test coins). */
  pays_to: string;
}

/** Why no test transaction could be made (a message for the command line). */
export class TestTransactionError extends Error {
  override readonly name = 'TestTransactionError';
}

async function rpc(url: string, auth: string, method: string, params: unknown[]): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Basic ${auth}` },
      body: JSON.stringify({ jsonrpc: '1.0', id: method, method, params }),
      signal: AbortSignal.timeout(10_000),
    });
  } catch (error) {
    throw new TestTransactionError(
      `no simulator answers at ${url} (${error instanceof Error ? error.message : String(error)}): npm start prints its URL; SIMULATOR_PORT pins it`,
    );
  }
  const body = (await response.json().catch(() => ({}))) as {
    result?: unknown;
    error?: { message?: string };
  };
  if (body.error) throw new TestTransactionError(`${method}: ${body.error.message ?? 'error'}`);
  return body.result;
}

/**
 * A spendable test transaction for `POST /api/v1/broadcast` on the embedded simulator: it spends
 * the first output of the simulator's faucet (paid in its first block, keyed by the seed) that the
 * node reports unspent — in the chain and the mempool — to the faucet's own address at `feeRate`,
 * signed for real (P2WPKH, BIP 143), and checked with the node's `testmempoolaccept`.
 * @throws TestTransactionError when no simulator answers, it runs another seed, or every output is spent
 * @example const tx = await spendableTestTransaction({ simulatorUrl: 'http://127.0.0.1:18443' });
 */
export async function spendableTestTransaction(options: TestTransactionOptions): Promise<TestTransaction> {
  const seed = options.seed ?? MEMPOOL_SIMULATOR_DEFAULTS.seed;
  const feeRate = options.feeRate ?? 2;
  const base = options.simulatorUrl.replace(/\/+$/, '');
  const url = `${base}/`;
  const auth = Buffer.from(
    `${options.rpcUser ?? MEMPOOL_SIMULATOR_DEFAULTS.rpcUser}:${options.rpcPassword ?? MEMPOOL_SIMULATOR_DEFAULTS.rpcPassword}`,
  ).toString('base64');
  const faucet = createFaucet(seed);
  const funding = faucet.funding;
  const known = await fetch(`${base}/api/tx/${funding.txid}`, { signal: AbortSignal.timeout(10_000) }).then(
    (response) => response.status,
    () => 0,
  );
  if (known === 0) await rpc(url, auth, 'getblockcount', []); // says who does not answer
  if (known !== 200) {
    throw new TestTransactionError(
      `the simulator at ${base} has no faucet of seed ${seed}: pass its seed (--seed, SIMULATOR_SEED of npm start)`,
    );
  }
  let lastReason = '';
  for (let vout = 0; vout < FAUCET_OUTPUTS; vout += 1) {
    if ((await rpc(url, auth, 'gettxout', [funding.txid, vout, true])) === null) continue;
    const output = funding.outputs[vout]!;
    const spent: SpendableOutput = { txid: funding.txid, vout, value: output.value, script: output.script };
    // Signed once to learn its size, then again with the fee that size needs at the rate.
    const sized = btc.Transaction.fromRaw(
      Buffer.from(
        signFaucetSpend(faucet, [spent], [{ script: faucet.script, value: output.value - 1_000n }]),
        'hex',
      ),
    );
    const vsize = sized.vsize;
    const fee = BigInt(Math.ceil(feeRate * vsize));
    const hex = signFaucetSpend(faucet, [spent], [{ script: faucet.script, value: output.value - fee }]);
    const [verdict] = (await rpc(url, auth, 'testmempoolaccept', [[hex]])) as Array<{
      txid: string;
      allowed: boolean;
      vsize?: number;
      'reject-reason'?: string;
    }>;
    if (verdict?.allowed) {
      const size = verdict.vsize ?? vsize;
      return {
        hex,
        txid: verdict.txid,
        vsize: size,
        fee_sat: Number(fee),
        fee_rate_sat_vb: Math.round((Number(fee) / size) * 1000) / 1000,
        spends: { txid: funding.txid, vout, value_sat: Number(output.value) },
        pays_to: faucet.address,
      };
    }
    lastReason = verdict?.['reject-reason'] ?? 'refused';
    if (!/missing|spent|conflict|already/i.test(lastReason)) {
      throw new TestTransactionError(`the simulator's node refuses the test transaction: ${lastReason}`);
    }
  }
  throw new TestTransactionError(
    `every one of the faucet's ${FAUCET_OUTPUTS} outputs is spent on the simulator at ${base}${lastReason ? ` (${lastReason})` : ''}: restart npm start for a fresh chain`,
  );
}
