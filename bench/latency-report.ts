// The latency section's part of docs/benchmarks.md: its target row and section 10.
import { type LatencySectionResult, type LatencyStack, OFFICIAL_STACK, WARMUP_PAYMENTS } from './latency';
import { fmt, fmtSpread } from './lib/stats';

const FRAMEWORKS = [
  ['express', 'Express 5'],
  ['fastify', 'Fastify 5'],
  ['koa', 'Koa 3'],
] as const;

export function latencyTarget(result: LatencySectionResult | undefined): {
  target: string;
  figure: string;
  verdict: 'met' | 'missed' | 'not measured';
  why?: string;
} {
  const target =
    "Paid request latency: Tollbooth's p50 at least one facilitator round trip below the official @x402/express's (facilitator 50 ms away each way, a block every 2 s; each framework)";
  const official = result?.stacks.find((s) => s.id === OFFICIAL_STACK);
  const ours = FRAMEWORKS.map(([id, name]) => ({ name, s: result?.stacks.find((x) => x.id === id) })).filter(
    (x): x is { name: (typeof FRAMEWORKS)[number][1]; s: LatencyStack } => x.s !== undefined && x.s.ok > 0,
  );
  if (!result || !official || official.ok === 0 || ours.length === 0)
    return { target, figure: 'n/a', verdict: 'not measured' };
  const trip = result.roundTripMs.median;
  const gains = ours.map((x) => ({ ...x, gain: official.p50Ms - x.s.p50Ms }));
  const worst = Math.min(...gains.map((g) => g.gain));
  const ok = worst >= trip && result.balancesOk;
  const calls = (s: LatencyStack) =>
    `${fmt(s.verifyPerRequest, 2)} /verify + ${fmt(s.settlePerRequest, 2)} /settle`;
  return {
    target,
    figure: `p50 ${gains.map((g) => `${g.name} ${fmt(g.s.p50Ms, 0)} ms`).join(', ')} vs official ${fmt(official.p50Ms, 0)} ms: ${gains.map((g) => `${fmt(g.gain, 0)}`).join(' / ')} ms below, one round trip ${fmt(trip, 0)} ms`,
    verdict: ok ? 'met' : 'missed',
    why: `Facilitator calls per paid request: Tollbooth ${ours.map((x) => `${x.name} ${calls(x.s)}`).join(', ')}; official ${calls(official)}. A round trip is a \`/verify\` through the delayed proxy measured from the runner in the same run (${fmtSpread(result.roundTripMs, 0, ' ms')}): ${2 * result.delayMs} ms of delay plus the facilitator's own work. The rest of every request is the same for both stacks: the settlement's wait for its block (on average half the block time) and the receipt. Section 10.${result.balancesOk ? '' : ' **The chain did not move exactly the 200s in this run** (section 10).'}`,
  };
}

export function renderLatencySection(result: LatencySectionResult): string[] {
  const official = result.stacks.find((s) => s.id === OFFICIAL_STACK);
  const out = [
    "## 10. A paid request's latency, facilitator round trips included",
    '',
    `Anvil on the devnet mines a block every ${result.blockSeconds} s (interval mining, as a live chain does); Tollbooth's standalone facilitator (\`@tollbooth/facilitator\` over the in-process EVM facilitator) settles there, behind one fault proxy per stack adding ${result.delayMs} ms each way to every request and answer (\`delayMs\`): a hosted facilitator's distance. Each stack is its own server process paying the same route (USDC on the devnet, $0.001) through the same facilitator; Tollbooth's gate has a chain reader on the devnet's RPC (loopback: a hosted RPC's round trip would add to any chain read the gate makes), its ledger in memory. After ${WARMUP_PAYMENTS} warm-up payments per stack, every stack gets ${result.phases * result.cycles} paid requests, one every ${fmt(result.periodMs, 0)} ms, the stacks staggered inside each period and all running at once: ${fmt(result.periodMs, 0)} ms is ${result.periodSteps}/${result.phases} of the block time, so over ${result.phases} requests a stack's requests start at ${result.phases} phases ${fmt((result.blockSeconds * 1000) / result.phases, 0)} ms apart spread evenly over the block interval — the same phases for every stack${result.cycles > 1 ? `, ${result.cycles} times over, each cycle shifted by 1/${result.cycles} of a step (${result.phases * result.cycles} phases in all)` : ''}. The rate is about one request a second per stack: this is the wait of one payer, not of a queue. Latency is the client's wall time from sending the request to the answer's last byte; only 200s with a settled receipt count. Facilitator calls are counted by each stack's proxy.`,
    '',
    '| Stack | paid 200s / sent | p50 ms | p90 ms | p99 ms | p50 vs official | /verify per request | /settle per request |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...result.stacks.map(
      (s) =>
        `| ${s.label} | ${s.ok} / ${s.ok + s.failed} | ${fmt(s.p50Ms, 0)} | ${fmt(s.p90Ms, 0)} | ${fmt(s.p99Ms, 0)} | ${official && s.id !== OFFICIAL_STACK ? `${s.p50Ms - official.p50Ms < 0 ? '−' : '+'}${fmt(Math.abs(s.p50Ms - official.p50Ms), 0)} ms` : '—'} | ${fmt(s.verifyPerRequest, 2)} | ${fmt(s.settlePerRequest, 2)} |`,
    ),
    '',
    `One facilitator round trip (\`/verify\` through a delayed proxy, from the runner): ${fmtSpread(result.roundTripMs, 0, ' ms')}. Balances and \`AuthorizationUsed\` events: ${result.balancesOk ? 'the payers lost and the recipient got the price of every 200 (warm-up included), one transfer each' : '**wrong**'}.`,
    '',
  ];
  for (const s of result.stacks)
    if (s.problems.length > 0) out.push(`- ${s.label}: ${s.failed} failed (${s.problems.join('; ')})`);
  for (const note of result.notes) out.push(`- ${note}`);
  if (result.notes.length > 0 || result.stacks.some((s) => s.problems.length > 0)) out.push('');
  return out;
}
