import type { ParsedOutput, ParsedTransaction } from './parse';

/**
 * Labelled guesses about what a transaction is for. None of them is a fact: each says which rule
 * fired and how confident the rule is (0–1). The rules are the common chain-analysis ones, kept
 * deliberately simple so a reader can check them against the inputs and outputs.
 */
export interface Heuristic {
  label: 'consolidation' | 'batch_payout' | 'coinjoin_like' | 'likely_change';
  confidence: number;
  /** The rule that fired, in words. */
  rule: string;
  /** The output the label points at (likely_change only). */
  output?: number;
}

/** Outputs that pay someone: OP_RETURN data and anchors are not payments. */
function paymentOutputs(tx: ParsedTransaction): ParsedOutput[] {
  return tx.outputs.filter((o) => o.kind !== 'op_return' && o.kind !== 'anchor');
}

/** The largest group of outputs sharing one value. */
function largestEqualValueGroup(outputs: ParsedOutput[]): { value: number; count: number } {
  const counts = new Map<number, number>();
  let best = { value: 0, count: 0 };
  for (const o of outputs) {
    const count = (counts.get(o.value_sat) ?? 0) + 1;
    counts.set(o.value_sat, count);
    if (count > best.count) best = { value: o.value_sat, count };
  }
  return best;
}

/** A value a person would type: a whole multiple of 10,000 sats (0.0001 BTC). */
const ROUND_SATS = 10_000;
const isRound = (value: number) => value > 0 && value % ROUND_SATS === 0;

function coinjoinLike(tx: ParsedTransaction, payments: ParsedOutput[]): Heuristic | undefined {
  const group = largestEqualValueGroup(payments);
  if (group.count < 3 || tx.inputs.length < group.count) return undefined;
  const confidence = group.count >= 5 ? 0.85 : 0.6;
  return {
    label: 'coinjoin_like',
    confidence,
    rule: `${group.count} outputs of exactly ${group.value} sats and at least as many inputs (${tx.inputs.length}): equal-value outputs funded by many inputs are the coinjoin pattern`,
  };
}

function consolidation(tx: ParsedTransaction, payments: ParsedOutput[]): Heuristic | undefined {
  if (payments.length !== 1 || tx.inputs.length < 2) return undefined;
  return tx.inputs.length >= 3
    ? {
        label: 'consolidation',
        confidence: 0.9,
        rule: `${tx.inputs.length} inputs merged into 1 output: the shape of a wallet consolidating its coins`,
      }
    : {
        label: 'consolidation',
        confidence: 0.5,
        rule: '2 inputs merged into 1 output: a small consolidation, or a payment of the exact amount',
      };
}

function batchPayout(tx: ParsedTransaction, payments: ParsedOutput[]): Heuristic | undefined {
  if (payments.length < 5 || tx.inputs.length * 2 > payments.length) return undefined;
  return {
    label: 'batch_payout',
    confidence: payments.length >= 10 ? 0.8 : 0.6,
    rule: `${payments.length} payment outputs from ${tx.inputs.length} input(s): many recipients paid at once, as exchanges and payroll do`,
  };
}

interface ChangeVote {
  output: number;
  confidence: number;
  rule: string;
}

/** Each change rule's vote, strongest first. */
function changeVotes(tx: ParsedTransaction, payments: ParsedOutput[]): ChangeVote[] {
  const votes: ChangeVote[] = [];
  const inputScripts = new Set(tx.inputs.map((i) => i.prevout_script_hex).filter((s) => s !== null));
  const reused = payments.filter((o) => inputScripts.has(o.script_hex));
  if (reused.length === 1 && payments.length >= 2) {
    votes.push({
      output: reused[0]!.n,
      confidence: 0.95,
      rule: `output ${reused[0]!.n} pays back to the script of an input (address reuse)`,
    });
  }
  const inputKinds = new Set(tx.inputs.map((i) => i.kind));
  if (inputKinds.size === 1 && payments.length === 2) {
    const [kind] = inputKinds;
    const same = payments.filter((o) => o.kind === kind);
    if (same.length === 1) {
      votes.push({
        output: same[0]!.n,
        confidence: 0.7,
        rule: `output ${same[0]!.n} is the only output of the inputs' script type (${kind})`,
      });
    }
  }
  if (payments.length === 2) {
    const round = payments.filter((o) => isRound(o.value_sat));
    if (round.length === 1) {
      const other = payments.find((o) => o !== round[0])!;
      votes.push({
        output: other.n,
        confidence: 0.6,
        rule: `output ${round[0]!.n} is a round amount (${round[0]!.value_sat} sats) and output ${other.n} is not: the round one is likely the payment`,
      });
    }
  }
  return votes;
}

/**
 * The likely change output: the strongest rule's pick; each other rule that agrees adds 0.05
 * (capped at 0.95), each that disagrees takes 0.2 off and is named in the rule text.
 */
function likelyChange(tx: ParsedTransaction, payments: ParsedOutput[]): Heuristic | undefined {
  const votes = changeVotes(tx, payments);
  if (votes.length === 0) return undefined;
  const [first, ...rest] = votes;
  let confidence = first!.confidence;
  const notes: string[] = [first!.rule];
  for (const vote of rest) {
    if (vote.output === first!.output) {
      confidence = Math.min(0.95, confidence + 0.05);
      notes.push(`agrees: ${vote.rule}`);
    } else {
      confidence -= 0.2;
      notes.push(`disagrees: ${vote.rule}`);
    }
  }
  if (confidence < 0.3) return undefined;
  return {
    label: 'likely_change',
    confidence: Math.round(confidence * 100) / 100,
    rule: notes.join('; '),
    output: first!.output,
  };
}

/** Every heuristic that fires for a transaction (a coinjoin gets no change guess). */
export function transactionHeuristics(tx: ParsedTransaction): Heuristic[] {
  if (tx.coinbase) return [];
  const payments = paymentOutputs(tx);
  const out: Heuristic[] = [];
  const coinjoin = coinjoinLike(tx, payments);
  if (coinjoin) out.push(coinjoin);
  const merged = consolidation(tx, payments);
  if (merged) out.push(merged);
  const batch = coinjoin ? undefined : batchPayout(tx, payments);
  if (batch) out.push(batch);
  const change = coinjoin ? undefined : likelyChange(tx, payments);
  if (change) out.push(change);
  return out;
}
