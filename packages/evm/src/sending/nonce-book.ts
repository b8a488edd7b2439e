/**
 * The nonces of one local account, handed out by a local counter read once from the node (its
 * `pending` count), the way viem's nonce manager keeps them, plus the holes: nonces handed out and
 * refused while a later one was accepted. A hole is handed out before the counter moves on, so
 * nothing waits behind a gap. Pure bookkeeping: the sender reads the node's count and asks.
 */
export class NonceBook {
  /** Next nonce to hand out; undefined: the node's count is read first. */
  #next: number | undefined;
  /** The node's count is read again before the next nonce. */
  #stale = false;
  /** Nonces refused while a later one was accepted, lowest first: handed out first. */
  #holes: number[] = [];
  /** The highest nonce the node has (or may have) a transaction of ours for. */
  #highest = -1;

  /** True when the node's `pending` count has to be read (see {@link sync}) before {@link take}. */
  get needsSync(): boolean {
    return this.#next === undefined || this.#stale;
  }

  /** How many holes wait to be handed out. */
  get holeCount(): number {
    return this.#holes.length;
  }

  /**
   * Takes the node's `pending` count. The count covers what the node holds; our own nonces above it
   * (behind a hole) and the holes themselves stay ours to fill.
   */
  sync(pending: number): void {
    this.#stale = false;
    this.#holes = this.#holes.filter((n) => n >= pending);
    this.#next = Math.max(pending, this.#highest + 1);
    this.#highest = Math.max(this.#highest, pending - 1);
  }

  /** Reads the node's count again before the next nonce (another sender on the account). */
  markStale(): void {
    this.#stale = true;
  }

  /** The next nonce to sign with: the lowest hole first, else the counter. */
  take(): number {
    const hole = this.#holes.shift();
    if (hole !== undefined) return hole;
    if (this.#next === undefined) throw new Error('NonceBook.take before sync');
    return this.#next++;
  }

  /** The node has (or may have) a transaction of ours at `nonce`. */
  used(nonce: number): void {
    if (nonce > this.#highest) this.#highest = nonce;
  }

  /**
   * Ends a round with the nonces it handed out but did not use. Those above every used one go back
   * to the counter (handed out again); those below one are returned: holes for {@link addHoles}.
   */
  release(free: number[]): number[] {
    const above = free.filter((n) => n > this.#highest);
    if (above.length > 0) this.#next = Math.min(...above);
    return free.filter((n) => n < this.#highest);
  }

  /** Free nonces below a used one: the next requests take them first. */
  addHoles(nonces: number[]): void {
    this.#holes = [...new Set([...this.#holes, ...nonces])].sort((a, b) => a - b);
  }
}
