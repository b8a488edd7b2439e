import { type Hash, type Hex, type TransactionReceipt, TransactionReceiptNotFoundError } from 'viem';
import { getBlockNumber, getTransactionReceipt, sendRawTransaction } from 'viem/actions';
import type { ChainClient } from '../checks/chain-checks';
import { classifyBroadcastError } from './broadcast-errors';

interface Waiter {
  hash: Hash;
  resolve: (receipt: TransactionReceipt | undefined) => void;
  timer: ReturnType<typeof setTimeout>;
}

/** When the receipt of one hash was last asked for and not found. */
interface Asked {
  block: bigint;
  at: number;
  /** How many times in a row it was asked for at that same block. */
  times: number;
}

interface Broadcast {
  raw: Hex;
  nonce: number;
  /** When it was last sent. */
  sentAt: number;
  /** When it was first sent. */
  since: number;
}

/** A broadcast nobody waits for any more is still kept alive (re-sent, polled) this long. */
const KEEP_ALIVE_MS = 10 * 60_000;
/**
 * A receipt not found at a block is asked for again at that same block after this long, doubling
 * each time up to {@link SAME_BLOCK_REASK_MAX_MS}: a node can answer a block number before it
 * serves that block's receipts (a load-balanced RPC whose nodes lag each other, a node still
 * indexing), and a chain with no new block coming (a quiet devnet) would leave the wait hanging.
 */
export const SAME_BLOCK_REASK_MS = 500;
const SAME_BLOCK_REASK_MAX_MS = 8_000;

export interface ReceiptPollerOptions {
  pollingIntervalMs: number;
  /** A transaction without a receipt is broadcast again after this long. */
  rebroadcastAfterMs: number;
  /** A kept-alive transaction was refused for a reason that frees its nonce (not a nonce conflict). */
  onNonceFreed: (nonce: number) => void;
}

/**
 * Reads receipts for every pending transaction of one client with one poller: one
 * `eth_blockNumber` per tick, then the receipts of transactions not yet asked for at that block,
 * all in the same tick (one JSON-RPC batch on a batching transport). The lowest-nonce transaction
 * it keeps alive still without a receipt after `rebroadcastAfterMs` is broadcast again (nodes drop
 * pool transactions), also after its settlement answered `settlement_pending`, so the hash
 * reported then is the one that lands.
 */
export class ReceiptPoller {
  readonly #client: ChainClient;
  readonly #options: ReceiptPollerOptions;
  readonly #waiters = new Map<Hash, Waiter[]>();
  readonly #broadcasts = new Map<Hash, Broadcast>();
  /** Hashes waited for or kept alive whose receipt was asked for and not found. */
  readonly #asked = new Map<Hash, Asked>();
  #polling: ReturnType<typeof setTimeout> | undefined;

  constructor(client: ChainClient, options: ReceiptPollerOptions) {
    this.#client = client;
    this.#options = options;
  }

  /** True while `hash` is one of the transactions without a receipt that it keeps alive. */
  isPending(hash: Hash): boolean {
    return this.#broadcasts.has(hash);
  }

  /** Keeps the signed bytes `raw` (hash `hash`, nonce `nonce`) alive until their receipt. */
  keepAlive(hash: Hash, raw: Hex, nonce: number): void {
    const now = Date.now();
    this.#broadcasts.set(hash, { raw, nonce, sentAt: now, since: now });
  }

  /** The receipt of `hash`, or undefined when none arrived within `timeoutMs`. */
  waitForReceipt(hash: Hash, timeoutMs: number): Promise<TransactionReceipt | undefined> {
    return new Promise((resolve) => {
      const waiter: Waiter = {
        hash,
        resolve,
        timer: setTimeout(() => {
          this.#removeWaiter(waiter);
          resolve(undefined);
        }, timeoutMs),
      };
      // A new waiter asks at the next poll even at a block already asked at: one call, and the
      // settlement that waits learns at once of a receipt a lagging node served late.
      this.#asked.delete(hash);
      const list = this.#waiters.get(hash);
      if (list) list.push(waiter);
      else this.#waiters.set(hash, [waiter]);
      this.#schedulePoll(0);
    });
  }

  #removeWaiter(waiter: Waiter): void {
    const list = this.#waiters.get(waiter.hash);
    if (!list) return;
    const rest = list.filter((w) => w !== waiter);
    if (rest.length > 0) this.#waiters.set(waiter.hash, rest);
    else {
      this.#waiters.delete(waiter.hash);
      if (!this.#broadcasts.has(waiter.hash)) this.#asked.delete(waiter.hash);
    }
  }

  /**
   * Whether the receipt of `hash` is to be asked for at `block`: once per new block (a receipt
   * comes with a block), and again at the same block after {@link SAME_BLOCK_REASK_MS}, doubling.
   */
  #due(hash: Hash, block: bigint, now: number): boolean {
    const asked = this.#asked.get(hash);
    if (!asked || asked.block !== block) return true;
    return now - asked.at >= Math.min(SAME_BLOCK_REASK_MS * 2 ** (asked.times - 1), SAME_BLOCK_REASK_MAX_MS);
  }

  #schedulePoll(delay: number): void {
    if (this.#polling !== undefined || (this.#waiters.size === 0 && this.#broadcasts.size === 0)) return;
    this.#polling = setTimeout(() => {
      void this.#poll().finally(() => {
        this.#polling = undefined;
        this.#schedulePoll(this.#options.pollingIntervalMs);
      });
    }, delay);
    // Waiters hold the process with their own timers; transactions kept alive alone do not.
    this.#polling.unref?.();
  }

  async #poll(): Promise<void> {
    const client = this.#client;
    let block: bigint;
    try {
      block = await getBlockNumber(client, { cacheTime: 0 });
    } catch {
      return;
    }
    // A receipt comes with a new block: each hash is asked for once per block, and again at the
    // same block only after a while (a node may serve a block's receipts after its number).
    const now = Date.now();
    const due = new Set<Hash>();
    for (const hash of this.#waiters.keys()) if (this.#due(hash, block, now)) due.add(hash);
    for (const hash of this.#broadcasts.keys()) if (this.#due(hash, block, now)) due.add(hash);
    const hashes = [...due];
    const receipts = await Promise.all(
      hashes.map((hash) =>
        getTransactionReceipt(client, { hash }).catch((error: unknown) =>
          error instanceof TransactionReceiptNotFoundError ? null : undefined,
        ),
      ),
    );
    const answered = Date.now();
    for (const [i, hash] of hashes.entries()) {
      const receipt = receipts[i];
      if (receipt) {
        const list = this.#waiters.get(hash) ?? [];
        this.#waiters.delete(hash);
        this.#broadcasts.delete(hash);
        this.#asked.delete(hash);
        for (const waiter of list) {
          clearTimeout(waiter.timer);
          waiter.resolve(receipt);
        }
        continue;
      }
      if (receipt !== null) continue;
      if (!this.#waiters.has(hash) && !this.#broadcasts.has(hash)) continue;
      const asked = this.#asked.get(hash);
      this.#asked.set(hash, {
        block,
        at: answered,
        times: asked?.block === block ? asked.times + 1 : 1,
      });
    }
    await this.#keepAlive();
  }

  /**
   * Still without a receipt: send the same bytes again. Nodes drop pool transactions (restart,
   * eviction, anvil_dropAllTransactions), and a dropped one would leave its nonce as a gap every
   * later transaction waits behind. Kept up after the settlement answered `settlement_pending`, so
   * the hash it reported is the one that lands.
   * Only the lowest nonce is sent again: every later transaction waits behind it, so it is the one
   * that matters, and the cost stays one call per interval however many are pending. When the node
   * takes it as new (no "already known"), it had lost it, and most likely the later ones too (a
   * restart, an eviction): those are sent again at once, in nonce order, not one per block.
   */
  async #keepAlive(): Promise<void> {
    const now = Date.now();
    let lowest: [Hash, Broadcast] | undefined;
    for (const [hash, sent] of this.#broadcasts) {
      if (now - sent.since > KEEP_ALIVE_MS && !this.#waiters.has(hash)) {
        this.#broadcasts.delete(hash);
        this.#asked.delete(hash);
      } else if (!lowest || sent.nonce < lowest[1].nonce) lowest = [hash, sent];
    }
    if (!lowest || now - lowest[1].sentAt < this.#options.rebroadcastAfterMs) return;
    if ((await this.#sendAgain(...lowest)) !== 'taken as new') return;
    const rest = [...this.#broadcasts].filter(([, sent]) => sent.nonce > lowest[1].nonce);
    rest.sort(([, a], [, b]) => a.nonce - b.nonce);
    await Promise.all(rest.map(([hash, sent]) => this.#sendAgain(hash, sent)));
  }

  /** Sends kept-alive bytes again; a refusal that frees the nonce is reported. */
  async #sendAgain(
    hash: Hash,
    sent: Broadcast,
  ): Promise<'taken as new' | 'known' | 'unanswered' | 'refused'> {
    sent.sentAt = Date.now();
    try {
      await sendRawTransaction(this.#client, { serializedTransaction: sent.raw });
      return 'taken as new';
    } catch (error) {
      const kind = classifyBroadcastError(error);
      if (kind === 'known' || kind === 'unanswered') return kind;
      // Mined (its receipt comes with the next poll) or its nonce taken: nothing to keep alive.
      this.#broadcasts.delete(hash);
      if (!this.#waiters.has(hash)) this.#asked.delete(hash);
      // Refused for another reason: its nonce is free, a hole the next transaction fills.
      if (kind !== 'nonce') this.#options.onNonceFreed(sent.nonce);
      return 'refused';
    }
  }
}
