import {
  type Account,
  type Address,
  type Chain,
  type Client,
  type Hash,
  type Hex,
  keccak256,
  type LocalAccount,
  type TransactionReceipt,
  type Transport,
} from 'viem';
import { getTransactionCount, sendRawTransaction, sendTransaction } from 'viem/actions';
import { classifyBroadcastError } from './broadcast-errors';
import { FeeCache, type Fees } from './fee-cache';
import { NonceBook } from './nonce-book';
import { ReceiptPoller } from './receipt-poller';

export type SettlingClient = Client<Transport, Chain | undefined, Account>;

/** A transaction the node accepted (or may have accepted: `uncertain`). */
export interface SentTransaction {
  hash: Hash;
  nonce: number | undefined;
  /** The node did not answer the broadcast: the transaction may or may not be in its pool. */
  uncertain: boolean;
}

interface Request {
  to: Address;
  data: Hex;
  gas: bigint;
  attempts: number;
  /** Fills a nonce hole; nobody waits for it. */
  filler?: boolean;
  resolve: (sent: SentTransaction) => void;
  reject: (error: unknown) => void;
}

export interface SettlementSenderOptions {
  /** Receipt polling interval. Default: the client's. */
  pollingIntervalMs?: number | undefined;
  /** How long fees read from the node are reused. Default 1 000 ms. */
  feeTtlMs?: number | undefined;
  /** A transaction without a receipt is broadcast again after this long. Default 2 000 ms. */
  rebroadcastAfterMs?: number | undefined;
}

type BroadcastAnswer =
  | { kind: 'accepted' }
  | { kind: 'uncertain' }
  | { kind: 'nonce' | 'fee' | 'refused'; error: unknown };

/** Requests signed and broadcast together at most. */
const MAX_ROUND = 100;
/** How many times one request is signed again after the node refused it for a nonce or fee reason. */
const MAX_ATTEMPTS = 3;
/** How many times the same signed bytes are sent again when the node did not answer. */
const TRANSPORT_RETRIES = 2;

/**
 * Sends the settlement transactions of one account on one chain, and waits for their receipts.
 *
 * Nonces come from a {@link NonceBook} and are handed out only when a transaction is signed.
 * Requests that arrive while a broadcast is under way wait and go out together as the next round,
 * signed with consecutive nonces and sent in nonce order (one JSON-RPC batch on a batching
 * transport). A nonce the node refuses is handed out again: it becomes the counter again when
 * nothing later was accepted, else a hole the next request fills first (or a 0-value transfer to
 * itself when none is waiting), so nothing waits behind a gap. A refusal for a stale nonce (another
 * sender on the account) reads the node's count again; a fee too low reads fees again (the
 * {@link FeeCache}); either signs again. When the node does not answer a broadcast, the same bytes
 * are sent again (idempotent); if it still does not answer, the transaction is reported `uncertain`
 * and the {@link ReceiptPoller} keeps sending those bytes, never new ones for the same request.
 */
export class SettlementSender {
  readonly #client: SettlingClient;
  readonly #queue: Request[] = [];
  #sending = false;
  readonly #nonces = new NonceBook();
  readonly #fees: FeeCache;
  readonly #receipts: ReceiptPoller;

  constructor(client: SettlingClient, options: SettlementSenderOptions = {}) {
    this.#client = client;
    this.#fees = new FeeCache(client, options.feeTtlMs ?? 1_000);
    this.#receipts = new ReceiptPoller(client, {
      pollingIntervalMs: options.pollingIntervalMs ?? client.pollingInterval,
      rebroadcastAfterMs: options.rebroadcastAfterMs ?? 2_000,
      onNonceFreed: (nonce) => this.#addHoles([nonce]),
    });
  }

  /** Signs `to.call(data)` with the next nonce and broadcasts it; resolves once the node has it. */
  send(call: { to: Address; data: Hex; gas: bigint }): Promise<SentTransaction> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ ...call, attempts: 0, resolve, reject });
      void this.#pump();
    });
  }

  /** True while `hash` is one of its transactions without a receipt that it keeps alive. */
  isPending(hash: Hash): boolean {
    return this.#receipts.isPending(hash);
  }

  /** The receipt of `hash`, or undefined when none arrived within `timeoutMs`. */
  waitForReceipt(hash: Hash, timeoutMs: number): Promise<TransactionReceipt | undefined> {
    return this.#receipts.waitForReceipt(hash, timeoutMs);
  }

  async #pump(): Promise<void> {
    if (this.#sending) return;
    this.#sending = true;
    try {
      while (this.#queue.length > 0) {
        const round = this.#queue.splice(0, MAX_ROUND);
        if (this.#client.account.type === 'local') await this.#sendRound(round);
        else for (const request of round) await this.#sendThroughNode(request);
      }
    } finally {
      this.#sending = false;
    }
  }

  /** A JSON-RPC account: the node signs and picks the nonce; one at a time keeps the order. */
  async #sendThroughNode(request: Request): Promise<void> {
    try {
      const client = this.#client;
      const hash = await sendTransaction(client, {
        account: client.account,
        chain: client.chain,
        to: request.to,
        data: request.data,
        gas: request.gas,
        ...(await this.#fees.current()),
      } as never);
      request.resolve({ hash, nonce: undefined, uncertain: false });
    } catch (error) {
      request.reject(error);
    }
  }

  /**
   * Signs a round of requests with consecutive nonces (holes first) and broadcasts them together
   * (one JSON-RPC batch on a batching transport), then reads the answers in nonce order.
   */
  async #sendRound(round: Request[]): Promise<void> {
    const client = this.#client;
    const account = client.account as LocalAccount;
    let fees: Fees;
    try {
      fees = await this.#fees.current();
      if (this.#nonces.needsSync)
        this.#nonces.sync(
          await getTransactionCount(client, { address: account.address, blockTag: 'pending' }),
        );
    } catch (error) {
      for (const request of round) request.reject(error);
      return;
    }
    const signed: { request: Request; nonce: number; raw: Hex; hash: Hash }[] = [];
    const free: number[] = [];
    // Settlements take the holes first; a filler goes out only for a hole still left (a settlement
    // or a resync may have filled it), never at a fresh nonce.
    for (const request of [...round.filter((r) => !r.filler), ...round.filter((r) => r.filler)]) {
      if (request.filler && this.#nonces.holeCount === 0) continue;
      request.attempts++;
      const nonce = this.#nonces.take();
      try {
        const raw = await account.signTransaction({
          chainId: client.chain?.id,
          to: request.to,
          data: request.data,
          gas: request.gas,
          nonce,
          ...('gasPrice' in fees
            ? { type: 'legacy', gasPrice: fees.gasPrice }
            : { type: 'eip1559', ...fees }),
        } as never);
        signed.push({ request, nonce, raw, hash: keccak256(raw) });
      } catch (error) {
        request.reject(error);
        free.push(nonce);
      }
    }
    signed.sort((a, b) => a.nonce - b.nonce);
    const answers = await Promise.all(signed.map((tx) => this.#broadcast(tx.raw)));
    let fillerRefused = false;
    const retry: Request[] = [];
    for (const [i, tx] of signed.entries()) {
      const answer = answers[i]!;
      if (answer.kind === 'accepted' || answer.kind === 'uncertain') {
        // Uncertain bytes are kept alive by the poller, so their nonce is taken either way.
        this.#receipts.keepAlive(tx.hash, tx.raw, tx.nonce);
        tx.request.resolve({ hash: tx.hash, nonce: tx.nonce, uncertain: answer.kind === 'uncertain' });
        this.#nonces.used(tx.nonce);
        continue;
      }
      // Refused: this nonce was not used.
      free.push(tx.nonce);
      if (tx.request.filler) {
        if (tx.request.attempts < MAX_ATTEMPTS) retry.push(tx.request);
        else fillerRefused = true;
        continue;
      }
      if ((answer.kind === 'nonce' || answer.kind === 'fee') && tx.request.attempts < MAX_ATTEMPTS) {
        if (answer.kind === 'nonce') this.#nonces.markStale();
        else this.#fees.forget();
        retry.push(tx.request);
      } else tx.request.reject(answer.error);
    }
    // A free nonce below a used one is a hole later transactions wait behind: the next requests
    // (or fillers) take it first. Free nonces above every used one were all handed out in this
    // round and are handed out again.
    const holes = this.#nonces.release(free);
    this.#queue.unshift(...retry);
    // A node that keeps refusing a plain transfer (no gas money, or an intrinsic gas above 21 000
    // as on zkSync or Arbitrum) refuses every filler: send no more fillers, but keep the holes for
    // the next settlements (their gas is estimated). Dropping them would leave the gap for good.
    this.#addHoles(holes, !fillerRefused);
  }

  /** Nonces below a used one that are free: the next requests take them, or fillers do. */
  #addHoles(nonces: number[], fill = true): void {
    if (nonces.length === 0) return;
    this.#nonces.addHoles(nonces);
    if (!fill) return;
    for (let i = this.#queue.length; i < this.#nonces.holeCount; i++) this.#queue.push(this.#filler());
    void this.#pump();
  }

  /** A 0-value transfer to itself, to fill a nonce hole when no settlement is waiting to. */
  #filler(): Request {
    return {
      to: this.#client.account.address,
      data: '0x',
      gas: 21_000n,
      attempts: 0,
      filler: true,
      resolve: () => {},
      reject: () => {},
    };
  }

  /** Sends signed bytes; the same bytes again when the node does not answer. */
  async #broadcast(raw: Hex): Promise<BroadcastAnswer> {
    let unanswered = 0;
    for (;;) {
      try {
        await sendRawTransaction(this.#client, { serializedTransaction: raw });
        return { kind: 'accepted' };
      } catch (error) {
        const kind = classifyBroadcastError(error);
        if (kind === 'known') return { kind: 'accepted' };
        if (kind === 'unanswered') {
          if (unanswered >= TRANSPORT_RETRIES) return { kind: 'uncertain' };
          unanswered++;
          await new Promise((r) => setTimeout(r, 100 * unanswered));
          continue;
        }
        // After an unanswered try, "nonce too low" may be these very bytes, already mined.
        if (unanswered > 0) return { kind: 'uncertain' };
        return { kind, error };
      }
    }
  }
}
