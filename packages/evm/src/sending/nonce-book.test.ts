import { describe, expect, it } from 'vitest';
import { NonceBook } from './nonce-book';

describe('NonceBook', () => {
  it('asks for the node count first, then hands out consecutive nonces from it', () => {
    const book = new NonceBook();
    expect(book.needsSync).toBe(true);
    expect(() => book.take()).toThrow();
    book.sync(7);
    expect(book.needsSync).toBe(false);
    expect([book.take(), book.take(), book.take()]).toEqual([7, 8, 9]);
  });

  it('gives nonces of a round that were refused above every used one back to the counter', () => {
    const book = new NonceBook();
    book.sync(0);
    const nonces = [book.take(), book.take(), book.take()];
    book.used(nonces[0]!);
    expect(book.release([1, 2])).toEqual([]);
    expect(book.holeCount).toBe(0);
    expect(book.take()).toBe(1);
  });

  it('turns a refused nonce below a used one into a hole, handed out before the counter moves on', () => {
    const book = new NonceBook();
    book.sync(10);
    for (let i = 0; i < 3; i++) book.take();
    book.used(10);
    book.used(12);
    const holes = book.release([11]);
    expect(holes).toEqual([11]);
    book.addHoles(holes);
    book.addHoles([11]);
    expect(book.holeCount).toBe(1);
    expect([book.take(), book.take()]).toEqual([11, 13]);
  });

  it('hands out holes lowest first', () => {
    const book = new NonceBook();
    book.sync(0);
    for (let i = 0; i < 6; i++) book.take();
    book.used(5);
    book.addHoles([4, 1]);
    book.addHoles([2]);
    expect([book.take(), book.take(), book.take(), book.take()]).toEqual([1, 2, 4, 6]);
  });

  it('after a stale nonce, resyncs to the node count, keeping its own nonces above it and its holes there', () => {
    const book = new NonceBook();
    book.sync(0);
    for (let i = 0; i < 5; i++) book.take();
    book.used(4);
    book.addHoles([1, 3]);
    book.markStale();
    expect(book.needsSync).toBe(true);
    // Another sender took nonces 0 to 1: the node counts 2; hole 1 is gone, hole 3 stays ours.
    book.sync(2);
    expect(book.holeCount).toBe(1);
    expect([book.take(), book.take()]).toEqual([3, 5]);
  });

  it('jumps to the node count when the node is ahead of everything it handed out', () => {
    const book = new NonceBook();
    book.sync(0);
    book.used(book.take());
    book.markStale();
    book.sync(9);
    expect(book.take()).toBe(9);
  });
});
