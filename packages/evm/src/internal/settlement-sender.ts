import {
  type Account,
  type Address,
  BaseError,
  type Chain,
  type Client,
  Eip1559FeesNotSupportedError,
  type Hash,
  type Hex,
  keccak256,
  type LocalAccount,
  type TransactionReceipt,
  TransactionReceiptNotFoundError,
  type Transport,
} from 'viem';
import {
  estimateFeesPerGas,
  getBlockNumber,
  getTransactionCount,
  getTransactionReceipt,
  sendRawTransaction,
  sendTransaction,
} from 'viem/actions';
import { isTransportError } from './chain-checks';

export type SettlingClient = Client<Transport, Chain | undefined, Account>;

/** A transaction the node accepted (or may have accepted: `uncertain`). */
export interface SentTransaction {
  hash: Hash;
  nonce: number | undefined;
  /** The node did not answer the broadcast: the transaction may or may not be in its pool. */
  uncertain: boolean;
}

type Fees = { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint } | { gasPrice: bigint };

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

interface Waiter {
  hash: Hash;
  resolve: (receipt: TransactionReceipt | undefined) => void;
  timer: ReturnType<typeof setTimeout>;
  /** Block number at which the receipt was last asked for (undefined: never). */
  askedAt: bigint | undefined;
}

interface Broadcast {
  raw: Hex;
  nonce: number;
  /** When it was last sent. */
  sentAt: number;
  /** When it was first sent. */
  since: number;
  /** Block number at which its receipt was last asked for. */
  askedAt?: bigint | undefined;
}

/** A broadcast nobody waits for any more is still kept alive (re-sent, polled) this long. */
const KEEP_ALIVE_MS = 10 * 60_000;

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

const ACCEPTED = /already known|already imported|known transaction|AlreadyKnown/i;
const NONCE_CONFLICT =
  /nonce too low|nonce too high|nonce has already been used|replacement transaction underpriced|nonce gap|NonceTooLow|OldNonce|invalid nonce/i;
const FEE_TOO_LOW =
  /fee cap less than block base fee|max fee per gas less than block base fee|maxFeePerGas.*(?:less|lower) than|transaction underpriced|FeeCapTooLow|gas price too low/i;

function messageOf(error: unknown): string {
  if (error instanceof BaseError) return `${error.shortMessage} ${error.details ?? ''} ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

/**
 * Sends the settlement transactions of one account on one chain, and waits for their receipts.
 *
 * Nonces come from a local counter read once from the node (`pending` count) and handed out only
 * when a transaction is signed. Requests that arrive while a broadcast is under way wait and go out
 * together as the next round, signed with consecutive nonces and sent in nonce order (one JSON-RPC
 * batch on a batching transport). A nonce the node refuses is handed out again: it becomes the
 * counter again when nothing later was accepted, else a hole the next request fills first (or a
 * 0-value transfer to itself when none is waiting), so nothing waits behind a gap. A refusal for
 * a stale nonce (another sender on the account) reads the node's count again; a fee too low reads
 * fees again; either signs again. When the node does not answer a broadcast, the same bytes are
 * sent again (idempotent); if it still does not answer, the transaction is reported `uncertain` and
 * the poller keeps sending those bytes, never new ones for the same request.
 *
 * Receipts are read by one poller for every pending transaction: one `eth_blockNumber` per tick,
 * then the receipts of transactions not yet asked for at that block, all in the same tick (one
 * JSON-RPC batch on a batching transport). The lowest-nonce transaction still without a receipt
 * after `rebroadcastAfterMs` is broadcast again (nodes drop pool transactions), also after its
 * settlement answered `settlement_pending`, so the hash reported then is the one that lands.
 */
export class SettlementSender {
  readonly #client: SettlingClient;
  readonly #pollingIntervalMs: number;
  readonly #feeTtlMs: number;
  readonly #rebroadcastAfterMs: number;
  readonly #queue: Request[] = [];
  #sending = false;
  /** Next nonce to hand out; undefined: read it from the node first. */
  #next: number | undefined;
  /** Read the next nonce from the node before the next transaction. */
  #stale = false;
  /** Nonces refused while a later one was accepted: handed out first. */
  #holes: number[] = [];
  /** The highest nonce the node has (or may have) a transaction of ours for. */
  #highest = -1;
  #fees: { value: Fees; at: number } | undefined;
  #feesInFlight: Promise<Fees> | undefined;
  readonly #waiters = new Map<Hash, Waiter[]>();
  readonly #broadcasts = new Map<Hash, Broadcast>();
  #polling: ReturnType<typeof setTimeout> | undefined;

  constructor(client: SettlingClient, options: SettlementSenderOptions = {}) {
    this.#client = client;
    this.#pollingIntervalMs = options.pollingIntervalMs ?? client.pollingInterval;
    this.#feeTtlMs = options.feeTtlMs ?? 1_000;
    this.#rebroadcastAfterMs = options.rebroadcastAfterMs ?? 2_000;
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
    return this.#broadcasts.has(hash);
  }

  /** The receipt of `hash`, or undefined when none arrived within `timeoutMs`. */
  waitForReceipt(hash: Hash, timeoutMs: number): Promise<TransactionReceipt | undefined> {
    return new Promise((resolve) => {
      const waiter: Waiter = {
        hash,
        askedAt: undefined,
        resolve,
        timer: setTimeout(() => {
          this.#removeWaiter(waiter);
          resolve(undefined);
        }, timeoutMs),
      };
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
    else this.#waiters.delete(waiter.hash);
  }

  async #fetchFees(): Promise<Fees> {
    const client = this.#client;
    const chain = client.chain;
    try {
      // Twice the base fee plus the tip (ethers' rule): valid for several blocks of rising base
      // fee, and only the actual base fee is paid.
      const fees = await estimateFeesPerGas(client, {
        chain: chain ? { ...chain, fees: { baseFeeMultiplier: 2, ...chain.fees } } : undefined,
        type: 'eip1559',
      });
      return { maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas };
    } catch (error) {
      if (!(error instanceof BaseError && error.walk((e) => e instanceof Eip1559FeesNotSupportedError)))
        throw error;
      const fees = await estimateFeesPerGas(client, { chain, type: 'legacy' });
      return { gasPrice: fees.gasPrice };
    }
  }

  async #currentFees(): Promise<Fees> {
    if (this.#fees && Date.now() - this.#fees.at < this.#feeTtlMs) return this.#fees.value;
    if (!this.#feesInFlight) {
      this.#feesInFlight = this.#fetchFees().then(
        (value) => {
          this.#fees = { value, at: Date.now() };
          this.#feesInFlight = undefined;
          return value;
        },
        (error: unknown) => {
          this.#feesInFlight = undefined;
          throw error;
        },
      );
    }
    return this.#feesInFlight;
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
        ...(await this.#currentFees()),
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
      fees = await this.#currentFees();
      if (this.#next === undefined || this.#stale) {
        this.#stale = false;
        // The node's count covers what it holds; our own nonces above it (behind a hole) and the
        // holes themselves stay ours to fill.
        const pending = await getTransactionCount(client, { address: account.address, blockTag: 'pending' });
        this.#holes = this.#holes.filter((n) => n >= pending);
        this.#next = Math.max(pending, this.#highest + 1);
        this.#highest = Math.max(this.#highest, pending - 1);
      }
    } catch (error) {
      for (const request of round) request.reject(error);
      return;
    }
    const signed: { request: Request; nonce: number; raw: Hex; hash: Hash }[] = [];
    const free: number[] = [];
    // Settlements take the holes first; a filler goes out only for a hole still left (a settlement
    // or a resync may have filled it), never at a fresh nonce.
    for (const request of [...round.filter((r) => !r.filler), ...round.filter((r) => r.filler)]) {
      if (request.filler && this.#holes.length === 0) continue;
      request.attempts++;
      const nonce = this.#holes.length > 0 ? this.#holes.shift()! : this.#next++;
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
        this.#track(tx.hash, tx.raw, tx.nonce);
        tx.request.resolve({ hash: tx.hash, nonce: tx.nonce, uncertain: answer.kind === 'uncertain' });
        if (tx.nonce > this.#highest) this.#highest = tx.nonce;
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
        if (answer.kind === 'nonce') this.#stale = true;
        else this.#fees = undefined;
        retry.push(tx.request);
      } else tx.request.reject(answer.error);
    }
    // A free nonce below a used one is a hole later transactions wait behind: the next requests
    // (or fillers) take it first. Free nonces above every used one were all handed out in this
    // round and are handed out again.
    const above = free.filter((n) => n > this.#highest);
    if (above.length > 0) this.#next = Math.min(...above);
    this.#queue.unshift(...retry);
    // A node that keeps refusing a plain transfer (no gas money, or an intrinsic gas above 21 000
    // as on zkSync or Arbitrum) refuses every filler: send no more fillers, but keep the holes for
    // the next settlements (their gas is estimated). Dropping them would leave the gap for good.
    this.#addHoles(
      free.filter((n) => n < this.#highest),
      !fillerRefused,
    );
  }

  /** Nonces below a used one that are free: the next requests take them, or fillers do. */
  #addHoles(nonces: number[], fill = true): void {
    if (nonces.length === 0) return;
    this.#holes = [...new Set([...this.#holes, ...nonces])].sort((a, b) => a - b);
    if (!fill) return;
    for (let i = this.#queue.length; i < this.#holes.length; i++) this.#queue.push(this.#filler());
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
        const text = messageOf(error);
        if (ACCEPTED.test(text)) return { kind: 'accepted' };
        if (isTransportError(error)) {
          if (unanswered >= TRANSPORT_RETRIES) return { kind: 'uncertain' };
          unanswered++;
          await new Promise((r) => setTimeout(r, 100 * unanswered));
          continue;
        }
        // After an unanswered try, "nonce too low" may be these very bytes, already mined.
        if (unanswered > 0) return { kind: 'uncertain' };
        if (NONCE_CONFLICT.test(text)) return { kind: 'nonce', error };
        if (FEE_TOO_LOW.test(text)) return { kind: 'fee', error };
        return { kind: 'refused', error };
      }
    }
  }

  #track(hash: Hash, raw: Hex, nonce: number): void {
    const now = Date.now();
    this.#broadcasts.set(hash, { raw, nonce, sentAt: now, since: now });
  }

  #schedulePoll(delay: number): void {
    if (this.#polling !== undefined || (this.#waiters.size === 0 && this.#broadcasts.size === 0)) return;
    this.#polling = setTimeout(() => {
      void this.#poll().finally(() => {
        this.#polling = undefined;
        this.#schedulePoll(this.#pollingIntervalMs);
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
    // A receipt can only appear with a new block: each hash is asked for once per block.
    const due = new Set<Hash>();
    for (const [hash, list] of this.#waiters) if (list.some((w) => w.askedAt !== block)) due.add(hash);
    for (const [hash, sent] of this.#broadcasts) if (sent.askedAt !== block) due.add(hash);
    const hashes = [...due];
    const receipts = await Promise.all(
      hashes.map((hash) =>
        getTransactionReceipt(client, { hash }).catch((error: unknown) =>
          error instanceof TransactionReceiptNotFoundError ? null : undefined,
        ),
      ),
    );
    for (const [i, hash] of hashes.entries()) {
      const receipt = receipts[i];
      const list = this.#waiters.get(hash) ?? [];
      if (receipt) {
        this.#waiters.delete(hash);
        this.#broadcasts.delete(hash);
        for (const waiter of list) {
          clearTimeout(waiter.timer);
          waiter.resolve(receipt);
        }
        continue;
      }
      if (receipt !== null) continue;
      for (const waiter of list) waiter.askedAt = block;
      const sent = this.#broadcasts.get(hash);
      if (sent) sent.askedAt = block;
    }
    // Still without a receipt: send the same bytes again. Nodes drop pool transactions (restart,
    // eviction, anvil_dropAllTransactions), and a dropped one would leave its nonce as a gap
    // every later transaction waits behind. Kept up after the settlement answered
    // `settlement_pending`, so the hash it reported is the one that lands.
    // Only the lowest nonce is sent again: every later transaction waits behind it, so it is the
    // one that matters, and the cost stays one call per interval however many are pending. When the
    // node takes it as new (no "already known"), it had lost it, and most likely the later ones too
    // (a restart, an eviction): those are sent again at once, in nonce order, not one per block.
    const now = Date.now();
    let lowest: [Hash, Broadcast] | undefined;
    for (const [hash, sent] of this.#broadcasts) {
      if (now - sent.since > KEEP_ALIVE_MS && !this.#waiters.has(hash)) this.#broadcasts.delete(hash);
      else if (!lowest || sent.nonce < lowest[1].nonce) lowest = [hash, sent];
    }
    if (!lowest || now - lowest[1].sentAt < this.#rebroadcastAfterMs) return;
    if ((await this.#sendAgain(...lowest)) !== 'taken as new') return;
    const rest = [...this.#broadcasts].filter(([, sent]) => sent.nonce > lowest[1].nonce);
    rest.sort(([, a], [, b]) => a.nonce - b.nonce);
    await Promise.all(rest.map(([hash, sent]) => this.#sendAgain(hash, sent)));
  }

  /** Sends tracked bytes again; a refusal that frees the nonce turns it into a hole. */
  async #sendAgain(
    hash: Hash,
    sent: Broadcast,
  ): Promise<'taken as new' | 'known' | 'unanswered' | 'refused'> {
    sent.sentAt = Date.now();
    try {
      await sendRawTransaction(this.#client, { serializedTransaction: sent.raw });
      return 'taken as new';
    } catch (error) {
      if (isTransportError(error)) return 'unanswered';
      const text = messageOf(error);
      if (ACCEPTED.test(text)) return 'known';
      // Mined (its receipt comes with the next poll) or its nonce taken: nothing to keep alive.
      this.#broadcasts.delete(hash);
      // Refused for another reason: its nonce is free, a hole the next transaction fills.
      if (!NONCE_CONFLICT.test(text)) this.#addHoles([sent.nonce]);
      return 'refused';
    }
  }
}

const senders = new WeakMap<object, SettlementSender>();

/** The one sender of a client (one account on one chain), created on first use. */
export function settlementSenderFor(
  client: SettlingClient,
  options?: SettlementSenderOptions,
): SettlementSender {
  let sender = senders.get(client);
  if (!sender) {
    sender = new SettlementSender(client, options);
    senders.set(client, sender);
  }
  return sender;
}
