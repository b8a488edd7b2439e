// The market a corpus question is asked in, the question's shape, and the figures' formats.

/** The market a corpus question is asked in, read from the service's own resources. */
export interface World {
  scenario: 'calm' | 'backlog';
  /** The free preview's tiers (the snapshot every AI answer cites). */
  tiers: { fastest: number; half_hour: number; hour: number; economy: number; minimum: number };
  mempool: { vsize: number; projected_block_count: number };
  /** The paid decision (GET /api/v1/fees/now). */
  decision: { decision: 'send' | 'wait'; savings_sat_vb: number; savings_percent: number };
  /** The chain tip (the simulator's). */
  tip: { height: number; fullness_percent: number };
  /** The paid next block (GET /api/v1/mining/nextblock). */
  nextBlock: { height: number; entry: number; p50: number };
  /** The paid landscape (GET /api/v1/fees/landscape). */
  landscape: { direction: string; environment: string };
  /** The paid scoreboard's first-ranked row per horizon over 168 hours. */
  best: Record<number, { source: string; hit_percent: number; n: number }>;
  /** An unconfirmed transaction, the lowest-paying one found, with its size and fee (the simulator's). */
  lowTx: { txid: string; vsize: number; fee: number };
}

export interface CorpusQuestion {
  id: string;
  resource: 'chat' | 'analyst';
  /** The question; `{LOW_TX}` and `{TIP}` are filled from the world. */
  q: string;
  /** Scenarios it is asked in (default: calm for the chat, both for the analyst). */
  scenarios?: World['scenario'][];
  /** What must be in the answer's prose. */
  facts: (w: World) => string[];
  /** What must not be (a wrong plural, a figure it must not compute). */
  absent?: (w: World) => string[];
  /** Chat: the calculations it must run. Analyst: the intent it answers and the action it advises. */
  kinds?: string[];
  intent?: string;
  action?: (w: World) => string;
}

/** "12.5 sat/vB" with at most three decimals, as the service writes rates. */
export const rate = (x: number) => `${Number(x.toFixed(3))} sat/vB`;
/** "1,234 sats" (one sat singular). */
export const sats = (n: number) => `${n.toLocaleString('en-US')} ${n === 1 ? 'sat' : 'sats'}`;
/** Fee in whole sats for a rate and a size, rounded up, from milli-sats (no float product). */
export const fee = (r: number, vsize: number) => Math.ceil((Math.round(r * 1000) * vsize) / 1000);
