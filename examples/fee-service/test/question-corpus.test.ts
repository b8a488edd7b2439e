// The question corpus (test/corpus/questions.ts) asked of a running service, without a model, as
// a practitioner would: each question paid with the official x402 client, in the calm and backlog
// scenarios of services started like `npm start` (their own simulator, run forward through a few
// hours of observatory history, then frozen so every resource reads the same market). Each answer
// must contain its facts, worked out by hand or from the service's other resources on that market.
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnalystBodySchema } from '../src/resources/ai/analyst/schema';
import { ChatBodySchema } from '../src/resources/ai/chat/schema';
import type { RunningFeeService } from '../src/service';
import { CORPUS, type CorpusQuestion, type World } from './corpus/questions';
import { balanceOf, type JsonBody, removeScratch, startTestService } from './support/harness';

const SCENARIOS = ['calm', 'backlog'] as const;
const PRICE = { chat: 10_000n, analyst: 50_000n } as const;
/**
 * Three hours of history: enough for the scoreboard to rank every horizon up to 6 blocks, and the
 * backlog scenario still holds its backlog (10 projected blocks). Time then stands still.
 */
const SERVICE_ENV = {
  SIMULATOR_HISTORY_HOURS: '3',
  SIMULATOR_TIME_SCALE: '0',
  RATE_LIMIT_MAX: '100000',
  AI_RATE_LIMIT_MAX: '100000',
  AI_ANALYST_BUDGET_MS: '120000',
};

let devnet: Devnet;
const services = new Map<World['scenario'], RunningFeeService>();
const worlds = new Map<World['scenario'], World>();

function payer(n: number) {
  const account = privateKeyToAccount(devnet.accounts.payers[n]!.privateKey as Hex);
  const pay = wrapFetchWithPayment(fetch, new x402Client().register('eip155:*', new ExactEvmScheme(account)));
  return { address: account.address, pay };
}

async function paidJson(url: string): Promise<JsonBody> {
  const response = await payer(0).pay(url);
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  return (await response.json()) as JsonBody;
}

/** The market of a scenario, read from the service's own resources and its simulator. */
async function readWorld(scenario: World['scenario'], service: RunningFeeService): Promise<World> {
  const sim = service.simulator!.url;
  const preview = (await (await fetch(`${service.url}/api/v1/fees/preview`)).json()) as JsonBody;
  const decision = await paidJson(`${service.url}/api/v1/fees/now`);
  const next = await paidJson(`${service.url}/api/v1/mining/nextblock`);
  const landscape = await paidJson(`${service.url}/api/v1/fees/landscape`);
  const board = await paidJson(`${service.url}/api/v1/fees/observatory/scoreboard?hours=168`);
  const tipHeight = Number(await (await fetch(`${sim}/api/blocks/tip/height`)).text());
  const [tipBlock] = (await (await fetch(`${sim}/api/v1/blocks/${tipHeight}`)).json()) as JsonBody[];
  const best: World['best'] = {};
  for (const row of board['data']['rows'] as JsonBody[]) {
    if (row['rank'] === 1 && row['n'] > 0 && row['hit_rate'] !== null)
      best[row['target']] = {
        source: row['source'],
        hit_percent: Math.round(row['hit_rate'] * 1000) / 10,
        n: row['n'],
      };
  }
  // The lowest-paying unconfirmed transaction among the newest and oldest arrivals.
  const ids = (await (await fetch(`${sim}/api/mempool/txids`)).json()) as string[];
  let lowTx: World['lowTx'] | undefined;
  for (const txid of [...ids.slice(0, 60), ...ids.slice(-140)]) {
    const tx = (await (await fetch(`${sim}/api/tx/${txid}`)).json()) as JsonBody;
    const vsize = Math.ceil(tx['weight'] / 4);
    if (!lowTx || tx['fee'] / vsize < lowTx.fee / lowTx.vsize) lowTx = { txid, vsize, fee: tx['fee'] };
  }
  const d = decision['data'];
  return {
    scenario,
    tiers: preview['data']['fee_rates_sat_vb'],
    mempool: preview['data']['mempool'],
    decision: {
      decision: d['decision'],
      savings_sat_vb: d['potential_savings']['sat_vb'],
      savings_percent: d['potential_savings']['percent'],
    },
    tip: { height: tipHeight, fullness_percent: Math.round((1000 * tipBlock!['weight']) / 4_000_000) / 10 },
    nextBlock: {
      height: next['data']['height'],
      entry: next['data']['entry_fee_rate_sat_vb'],
      p50: next['data']['fee_rates_sat_vb']['p50'],
    },
    landscape: {
      direction: landscape['data']['trend']['direction'],
      environment: landscape['data']['environment']['name'],
    },
    best,
    lowTx: lowTx!,
  };
}

beforeAll(async () => {
  devnet = await startDevnet({ payers: 2 });
  await Promise.all(
    SCENARIOS.map(async (scenario) => {
      const service = await startTestService({ ...SERVICE_ENV, SIMULATOR_SCENARIO: scenario }, { devnet });
      services.set(scenario, service);
    }),
  );
  for (const scenario of SCENARIOS) worlds.set(scenario, await readWorld(scenario, services.get(scenario)!));
}, 240_000);

afterAll(async () => {
  await Promise.all([...services.values()].map((s) => s.close()));
  await devnet?.stop();
  removeScratch();
});

const cases = CORPUS.flatMap((question) =>
  (question.scenarios ?? (question.resource === 'chat' ? ['calm'] : SCENARIOS)).map(
    (scenario) => [question.id, scenario, question] as const,
  ),
);

describe('the question corpus', () => {
  it('holds at least 30 distinct questions, chat and analyst, each with facts to check', () => {
    expect(new Set(CORPUS.map((q) => q.q)).size).toBeGreaterThanOrEqual(30);
    expect(new Set(CORPUS.map((q) => q.id)).size).toBe(CORPUS.length);
    expect(CORPUS.filter((q) => q.resource === 'analyst').length).toBeGreaterThanOrEqual(8);
  });

  it('reads two markets that differ: the calm one says send, the backlog one wait', () => {
    expect(worlds.get('calm')!.decision.decision).toBe('send');
    expect(worlds.get('backlog')!.decision.decision).toBe('wait');
    for (const world of worlds.values())
      expect(Object.keys(world.best)).toEqual(expect.arrayContaining(['1', '6']));
  });

  it.each(cases)(
    'answers %s (%s) with every fact it must contain',
    async (_, scenario, question: CorpusQuestion) => {
      const world = worlds.get(scenario)!;
      const service = services.get(scenario)!;
      const q = question.q.replace('{LOW_TX}', world.lowTx.txid).replace('{TIP}', String(world.tip.height));
      const path = question.resource === 'chat' ? '/api/v1/ai/chat' : '/api/v1/analyst';
      const { address, pay } = payer(1);
      const before = await balanceOf(devnet, address);
      const response = await pay(`${service.url}${path}?q=${encodeURIComponent(q)}`);
      expect(response.status, await response.clone().text()).toBe(200);
      expect(before - (await balanceOf(devnet, address))).toBe(PRICE[question.resource]);
      const body = await response.json();
      const prose: string =
        question.resource === 'chat'
          ? ChatBodySchema.parse(body).data.prose
          : AnalystBodySchema.parse(body).data.prose;
      for (const fact of question.facts(world)) expect(prose, `fact “${fact}”`).toContain(fact);
      for (const wrong of question.absent?.(world) ?? []) expect(prose).not.toContain(wrong);
      expect(prose).not.toMatch(/\b1 (?:blocks|confirmations|transactions|sources)\b/);
      if (question.resource === 'chat') {
        const { facts } = ChatBodySchema.parse(body).data;
        expect(facts.computed.map((c) => c.kind)).toEqual(question.kinds);
      } else {
        const { facts } = AnalystBodySchema.parse(body).data;
        expect(facts.intents[0]).toBe(question.intent);
        expect(facts.synthesis).not.toBeNull();
        if (question.action) expect(facts.synthesis!.action).toBe(question.action(world));
        // The conclusion combines several steps, never one step's summary alone.
        expect(facts.synthesis!.combined.length).toBeGreaterThanOrEqual(question.intent === 'block' ? 2 : 3);
        for (const step of facts.steps) expect(facts.conclusion).not.toBe(step.summary);
      }
    },
  );
});
