import type { HistoryWriter, NewEstimate, StoredBlock } from '../history/types';
import type { ScoreBook } from './score-book';
import { judgeEstimate, windowOf } from './scoring';
import type { EstimateSource, SourcePoll } from './sources';

/**
 * The steps of one recorder tick, each run inside the recorder's fenced write transaction. They
 * change the history and the recorder's score book together; the caller writes the book's changed
 * buckets in the same transaction, so the two never disagree.
 */

/** Judges every estimate whose window's last block is now recorded; returns how many. */
export async function judgeReady(writer: HistoryWriter, book: ScoreBook, tipHeight: number): Promise<number> {
  const ready = await writer.estimatesReadyAt(tipHeight);
  if (ready.length === 0) return 0;
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const estimate of ready) {
    const window = windowOf(estimate);
    first = Math.min(first, window.first);
    last = Math.max(last, window.last);
  }
  const blocks = await writer.percentiles(first, last);
  const byHeight = new Map(blocks.map((b) => [b.height, b]));
  const updates = [];
  for (const estimate of ready) {
    const window = windowOf(estimate);
    const windowBlocks = [];
    for (let height = window.first; height <= window.last; height += 1) {
      const block = byHeight.get(height);
      if (block) windowBlocks.push(block);
    }
    // A block of the window was never recorded (before the history's first block): nothing to
    // judge it on, so it stays out of the scores rather than being judged on part of its window.
    if (windowBlocks.length !== estimate.target) {
      updates.push({ id: estimate.id, judgment: undefined, unjudgeable: true });
      continue;
    }
    const judgment = judgeEstimate(estimate, windowBlocks);
    book.applyJudgment(estimate, judgment, 1);
    updates.push({ id: estimate.id, judgment });
  }
  await writer.setJudgments(updates);
  return ready.length;
}

/**
 * Drops the blocks from `forkHeight` up (orphaned) and takes back every judgment whose window
 * reached them; they are judged again when the new branch's blocks are recorded.
 */
export async function disconnectFrom(
  writer: HistoryWriter,
  book: ScoreBook,
  forkHeight: number,
): Promise<{ blocks: number; reopened: number }> {
  const reopened = await writer.judgedReaching(forkHeight);
  for (const estimate of reopened) book.applyJudgment(estimate, estimate.judgment!, -1);
  await writer.setJudgments(reopened.map((e) => ({ id: e.id, judgment: undefined })));
  const blocks = await writer.deleteBlocksFrom(forkHeight);
  return { blocks, reopened: reopened.length };
}

/** Records new blocks one by one, judging after each. */
export async function connectBlocks(
  writer: HistoryWriter,
  book: ScoreBook,
  blocks: readonly StoredBlock[],
): Promise<number> {
  let judged = 0;
  for (const block of blocks) {
    await writer.insertBlock(block);
    judged += await judgeReady(writer, book, block.height);
  }
  return judged;
}

/** The outcome of polling one source. */
export type PollOutcome =
  | { source: EstimateSource; ok: true; poll: SourcePoll; observedAt: number }
  | { source: EstimateSource; ok: false; error: unknown; observedAt: number };

/** A short reason for a gap, from a poll's error (its stable code when it has one). */
export function gapReason(error: unknown): string {
  if (error && typeof error === 'object' && 'code' in error && typeof error.code === 'string') {
    return error.code.toLowerCase();
  }
  return error instanceof Error ? error.name : 'poll_failed';
}

/**
 * Records the polls: every rate as an estimate; per scored target, a poll that counts towards
 * availability; a failed source opens a gap, a source that answers again closes it.
 */
export async function recordPolls(
  writer: HistoryWriter,
  book: ScoreBook,
  outcomes: readonly PollOutcome[],
  recordedTip: number | undefined,
): Promise<{ estimates: number; judged: number }> {
  const estimates: NewEstimate[] = [];
  for (const outcome of outcomes) {
    const { source, observedAt } = outcome;
    if (!outcome.ok) {
      for (const target of source.targets) book.addPoll(source.name, target, observedAt, false);
      await writer.openGap(source.name, observedAt, gapReason(outcome.error));
      continue;
    }
    await writer.closeGap(source.name, observedAt);
    for (const target of source.targets)
      book.addPoll(source.name, target, observedAt, outcome.poll.rates.has(target));
    for (const [target, rate] of outcome.poll.rates) {
      estimates.push({ source: source.name, target, rate, observedAt, tipHeight: outcome.poll.tipHeight });
    }
  }
  await writer.insertEstimates(estimates);
  // A source whose tip lags the recorded chain may quote a window that already exists.
  const judged = recordedTip === undefined ? 0 : await judgeReady(writer, book, recordedTip);
  return { estimates: estimates.length, judged };
}
