// The five AI resources on a running service (simulator upstream, devnet chain), paid by the
// official x402 client: deterministic answers without a model, the model's prose with the test
// model server, every model failure falling back (charged once), and every refusal or failure
// leaving the payer's balance where it was.
import * as btc from '@scure/btc-signer';
import { decodeHeaderJson, type SettleResponse } from '@tollbooth/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnalystBodySchema } from '../src/resources/ai/analyst/schema';
import { ChatBodySchema } from '../src/resources/ai/chat/schema';
import { ExplainBlockBodySchema } from '../src/resources/ai/explain-block/schema';
import { ExplainTransactionBodySchema } from '../src/resources/ai/explain-transaction/schema';
import { FeeAdviceBodySchema } from '../src/resources/ai/fee-advice/schema';
import { FeeLandscapeSchema } from '../src/resources/fees/landscape/schema';
import { NextBlockSchema } from '../src/resources/mining/nextblock/schema';
import type { RunningFeeService } from '../src/service';
import { type MempoolSimulator, startMempoolSimulator } from '../src/simulator/server';
import { balanceOf, type JsonBody, removeScratch, startTestService } from './support/harness';
import { type ModelBehaviour, startTestModelServer, type TestModelServer } from './support/model-server';

let devnet: Devnet;
let simulator: MempoolSimulator;
let models: TestModelServer;
let plain: RunningFeeService;
let withModel: RunningFeeService;
let confirmedTxid: string;
let mempoolTxid: string;
let tipHeight: number;

const simJson = async (path: string) => (await fetch(`${simulator.url}${path}`)).json() as Promise<JsonBody>;
const simText = async (path: string) => (await fetch(`${simulator.url}${path}`)).text();

/**
 * The rate limits are tested on their own service; here they would count every test's calls. The
 * analyst's time budget is tested with a clock of its own (analyst.test.ts); here it must not make
 * a loaded machine's slow step look like an analyst that gave up.
 */
const UNLIMITED = { RATE_LIMIT_MAX: '100000', AI_RATE_LIMIT_MAX: '100000', AI_ANALYST_BUDGET_MS: '120000' };

/** The official client paying as devnet payer `n`. */
function payer(n: number) {
  const account = privateKeyToAccount(devnet.accounts.payers[n]!.privateKey as Hex);
  const pay = wrapFetchWithPayment(fetch, new x402Client().register('eip155:*', new ExactEvmScheme(account)));
  return { address: account.address, pay, balance: () => balanceOf(devnet, account.address) };
}

beforeAll(async () => {
  [devnet, simulator, models] = await Promise.all([
    startDevnet({ payers: 4 }),
    startMempoolSimulator({ seed: 11 }),
    startTestModelServer({ model: 'test-model' }),
  ]);
  [plain, withModel] = await Promise.all([
    startTestService(UNLIMITED, { devnet, simulator }),
    startTestService(
      {
        ...UNLIMITED,
        AI_MODEL_BASE_URL: models.baseUrl,
        AI_MODEL: 'test-model',
        AI_MODEL_API_KEY: 'sk-test',
        AI_MODEL_TIMEOUT_MS: '1500',
      },
      { devnet, simulator },
    ),
  ]);
  tipHeight = Number(await simText('/api/blocks/tip/height'));
  const tipHash = await simText('/api/blocks/tip/hash');
  confirmedTxid = ((await simJson(`/api/block/${tipHash}/txids`)) as unknown as string[])[1]!;
  mempoolTxid = ((await simJson('/api/mempool/txids')) as unknown as string[])[0]!;
});

afterAll(async () => {
  await Promise.all([plain?.close(), withModel?.close()]);
  await Promise.all([devnet?.stop(), simulator?.close(), models?.close()]);
  removeScratch();
});

const paths = () => ({
  transaction: `/api/v1/ai/explain/transaction/${mempoolTxid}`,
  block: `/api/v1/ai/explain/block/${tipHeight}`,
  advice: '/api/v1/ai/fees/advice?urgency=low&amount_btc=0.005&context=consolidation',
  chat: `/api/v1/ai/chat?q=${encodeURIComponent('Why are fees high and how do I bump a stuck transaction?')}`,
  analyst: `/api/v1/analyst?q=${encodeURIComponent(`Check the preview and the decision: should I send now, and why is ${mempoolTxid} waiting?`)}`,
});
/** A question whose rules plan the preview, the next block and the landscape. */
const NEXT_BLOCK_AND_LANDSCAPE = 'What will the next block look like, and what is the whole fee landscape?';
const SCHEMAS = {
  transaction: ExplainTransactionBodySchema,
  block: ExplainBlockBodySchema,
  advice: FeeAdviceBodySchema,
  chat: ChatBodySchema,
  analyst: AnalystBodySchema,
} as const;
const PRICES = {
  transaction: 10_000n,
  block: 10_000n,
  advice: 10_000n,
  chat: 10_000n,
  analyst: 50_000n,
} as const;

describe('without a model', () => {
  it('the official x402 client pays all five and gets deterministic, schema-valid answers', async () => {
    const { address, pay, balance } = payer(0);
    const before = await balance();
    const transactions = new Set<string>();
    for (const [name, path] of Object.entries(paths()) as [keyof typeof SCHEMAS, string][]) {
      const response = await pay(`${plain.url}${path}`);
      expect(response.status, name).toBe(200);
      const receipt = decodeHeaderJson(response.headers.get('payment-response') ?? '') as SettleResponse;
      expect(receipt, name).toEqual({
        success: true,
        payer: address,
        network: `eip155:${devnet.chainId}`,
        transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        amount: String(PRICES[name]),
      });
      transactions.add(receipt.transaction);
      const body = SCHEMAS[name].parse(await response.json());
      expect(body.data.provider, name).toBe('deterministic');
      expect(body.meta.model).toEqual({ name: null, used: false, fallback: null });
      expect(body.data.prose.length, name).toBeGreaterThan(40);
    }
    expect(transactions.size).toBe(5);
    const spent = Object.values(PRICES).reduce((a, b) => a + b, 0n);
    expect(before - (await balance())).toBe(spent);
  });

  it.each([
    ['an unconfirmed', () => mempoolTxid],
    ['a confirmed', () => confirmedTxid],
  ])('explains %s transaction with fee and vsize recomputed independently', async (_, txid) => {
    const { pay } = payer(1);
    const response = await pay(`${plain.url}/api/v1/ai/explain/transaction/${txid()}`);
    const { data } = ExplainTransactionBodySchema.parse(await response.json());
    // Independently: btc-signer's Transaction (not the RawTx path the engine uses) for the size,
    // the Esplora JSON's values for the fee.
    const hex = await simText(`/api/tx/${txid()}/hex`);
    const tx = btc.Transaction.fromRaw(Buffer.from(hex, 'hex'), {
      allowUnknownOutputs: true,
      disableScriptCheck: true,
    });
    const json = await simJson(`/api/tx/${txid()}`);
    const inputs = (json['vin'] as { prevout: { value: number } }[]).reduce((s, v) => s + v.prevout.value, 0);
    const outputs = (json['vout'] as { value: number }[]).reduce((s, v) => s + v.value, 0);
    expect(data.facts.transaction.txid).toBe(txid());
    expect(data.facts.transaction.vsize).toBe(tx.vsize);
    expect(data.facts.transaction.weight).toBe(tx.weight);
    expect(data.facts.fee!.fee_sat).toBe(inputs - outputs);
    expect(data.facts.consistency.agrees).toBe(true);
    expect(data.facts.status.confirmed).toBe(txid() === confirmedTxid);
    if (txid() === confirmedTxid) expect(data.facts.status.confirmations).toBe(1);
  });

  it('explains the tip block with its notable transactions', async () => {
    const { pay } = payer(1);
    const { data } = ExplainBlockBodySchema.parse(
      await (await pay(`${plain.url}/api/v1/ai/explain/block/${tipHeight}`)).json(),
    );
    const block = (await simJson(`/api/v1/blocks/${tipHeight}`)) as unknown as JsonBody[];
    expect(data.facts.block).toMatchObject({
      height: tipHeight,
      hash: block[0]!['id'],
      tx_count: block[0]!['tx_count'],
    });
    expect(data.facts.fees.total_fee_sat).toBe(block[0]!['extras'].totalFees);
    expect(data.facts.notable?.transactions_seen).toBe(block[0]!['tx_count'] - 1);
    expect(data.facts.recent?.blocks).toBe(14);
  });

  it('runs the next block and the landscape in process: the paid resources’ own answers, the analyst charged once', async () => {
    const { pay, balance } = payer(1);
    const before = await balance();
    const response = await pay(
      `${plain.url}/api/v1/analyst?q=${encodeURIComponent(NEXT_BLOCK_AND_LANDSCAPE)}`,
    );
    expect(response.status).toBe(200);
    const { data } = AnalystBodySchema.parse(await response.json());
    // One payment, the analyst's: its steps never pay the resources they run.
    expect(before - (await balance())).toBe(PRICES.analyst);
    expect(data.facts.planned_by).toBe('rules');
    const step = (name: string) => data.facts.steps.find((s) => s.step === name);
    expect(step('next_block')).toMatchObject({
      status: 'ok',
      why: 'the question is about the next block or confirmation',
    });
    expect(step('landscape')).toMatchObject({ status: 'ok', why: 'the question asks for the whole picture' });
    const next = NextBlockSchema.parse(step('next_block')!.evidence);
    const landscape = FeeLandscapeSchema.parse(step('landscape')!.evidence);
    expect(next.data.tip.height).toBe(tipHeight);
    expect(next.data.height).toBe(tipHeight + 1);
    expect(landscape.data.tip_height).toBe(tipHeight);
    expect(data.prose).toContain(`next block: The next block (height ${tipHeight + 1},`);
    expect(data.prose).toContain(`landscape: The fee environment is ${landscape.data.environment.name}:`);

    // The same readings the paid resources serve (the simulator's clock is frozen): the same
    // digest and the same figures, apart from the next block's clock-relative tip age and ETA.
    const paidNext = NextBlockSchema.parse(await (await pay(`${plain.url}/api/v1/mining/nextblock`)).json());
    const paidLandscape = FeeLandscapeSchema.parse(
      await (await pay(`${plain.url}/api/v1/fees/landscape`)).json(),
    );
    expect(next.meta.snapshot_digest).toBe(paidNext.meta.snapshot_digest);
    const { tip: _tip, expected: _expected, ...nextFigures } = next.data;
    const { tip: _paidTip, expected: _paidExpected, ...paidNextFigures } = paidNext.data;
    expect(nextFigures).toEqual(paidNextFigures);
    expect(landscape.meta.snapshot_digest).toBe(paidLandscape.meta.snapshot_digest);
    expect(landscape.data).toEqual(paidLandscape.data);
  });

  it('reports the next block and the landscape unavailable while their upstream is down: 503 and never settled when nothing else ran', async () => {
    // A service of its own, so no reading of the next block or the landscape is cached yet.
    const own = await startMempoolSimulator({ seed: 12 });
    const service = await startTestService(UNLIMITED, { devnet, simulator: own });
    try {
      own.injectFault({ status: 503, count: 100_000, pathPrefix: '/api/v1/fees/mempool-blocks' });
      own.injectFault({ status: 'warmup', count: 100_000 });
      const { pay, balance } = payer(2);
      const before = await balance();
      const q = encodeURIComponent(NEXT_BLOCK_AND_LANDSCAPE);
      const failed = await pay(`${service.url}/api/v1/analyst?q=${q}&steps=next_block,landscape`);
      expect(failed.status).toBe(503);
      expect(failed.headers.get('payment-response')).toBeNull();
      expect(((await failed.json()) as JsonBody)['error'].code).toBe('upstream_unavailable');
      expect(await balance()).toBe(before);

      // With the preview beside them the report stands, each of them marked unavailable.
      const partial = await pay(`${service.url}/api/v1/analyst?q=${q}&steps=preview,next_block,landscape`);
      expect(partial.status).toBe(200);
      const { data } = AnalystBodySchema.parse(await partial.json());
      expect(data.facts.steps.map((s) => [s.step, s.status])).toEqual([
        ['preview', 'ok'],
        ['next_block', 'unavailable'],
        ['landscape', 'unavailable'],
      ]);
      expect(data.facts.steps[1]!.summary).toMatch(/^the next block: the upstream is unavailable/);
      expect(before - (await balance())).toBe(PRICES.analyst);
    } finally {
      await service.close();
      await own.close();
    }
  });

  it.each([
    ['a malformed txid', '/api/v1/ai/explain/transaction/xyz', 400],
    ['an unknown urgency', '/api/v1/ai/fees/advice?urgency=soon', 400],
    ['an amount with 9 decimals', '/api/v1/ai/fees/advice?amount_btc=0.000000001', 400],
    ['a missing question', '/api/v1/ai/chat', 400],
    ['a question over 500 characters', `/api/v1/ai/chat?q=${'fee'.repeat(167)}`, 400],
    ['an empty question', '/api/v1/ai/chat?q=', 400],
    ['a question of spaces only', '/api/v1/ai/chat?q=%20%20%20', 400],
    ['an analyst request without a question', '/api/v1/analyst', 400],
    ['an empty analyst question', '/api/v1/analyst?q=&steps=preview', 400],
    ['an analyst question over 500 characters', `/api/v1/analyst?q=${'fee'.repeat(167)}`, 400],
    ['a question outside the domain', '/api/v1/ai/chat?q=What%20is%20the%20weather%20in%20Paris', 422],
    ['an unknown analyst step', '/api/v1/analyst?q=fees&steps=preview,horoscope', 400],
    ['an analyst question outside the domain', '/api/v1/analyst?q=Write%20me%20a%20poem', 422],
  ])('refuses %s before any challenge and the payer is not charged', async (_, path, status) => {
    const unpaid = await fetch(`${plain.url}${path}`);
    expect(unpaid.status).toBe(status);
    expect(unpaid.headers.get('payment-required')).toBeNull();
    const { pay, balance } = payer(2);
    const before = await balance();
    const response = await pay(`${plain.url}${path}`);
    expect(response.status).toBe(status);
    expect(await balance()).toBe(before);
  });

  it.each([
    [
      'an unknown transaction',
      () => `/api/v1/ai/explain/transaction/${'ab'.repeat(32)}`,
      404,
      'unknown_transaction',
    ],
    ['a block above the tip', () => `/api/v1/ai/explain/block/${tipHeight + 1_000}`, 404, 'unknown_block'],
    [
      'an unknown block hash',
      () => `/api/v1/ai/explain/block/${'00'.repeat(4)}${'cd'.repeat(28)}`,
      404,
      'unknown_block',
    ],
    [
      'an analyst question about an unknown transaction',
      () => `/api/v1/analyst?q=explain%20${'ef'.repeat(32)}`,
      404,
      'unknown_transaction',
    ],
  ])('answers %s with its 404 after verification and never settles', async (_, path, status, code) => {
    const { pay, balance } = payer(2);
    const before = await balance();
    const response = await pay(`${plain.url}${path()}`);
    expect(response.status).toBe(status);
    expect(((await response.json()) as JsonBody)['error'].code).toBe(code);
    expect(await balance()).toBe(before);
  });

  it('answers 503 and never settles when the upstream fails during the explanation', async () => {
    const { pay, balance } = payer(2);
    const before = await balance();
    simulator.injectFault({ status: 503, count: 12, pathPrefix: `/api/tx/${confirmedTxid}` });
    const response = await pay(`${plain.url}/api/v1/ai/explain/transaction/${confirmedTxid}`);
    expect(response.status).toBe(503);
    expect(((await response.json()) as JsonBody)['error'].code).toBe('upstream_unavailable');
    expect(await balance()).toBe(before);
  });
});

describe('with the test model server', () => {
  it('answers all five with the model’s prose (the analyst narrating the rules’ plan)', async () => {
    models.setBehaviour('tools');
    const { pay, balance } = payer(3);
    const before = await balance();
    for (const [name, path] of Object.entries(paths()) as [keyof typeof SCHEMAS, string][]) {
      const response = await pay(`${withModel.url}${path}`);
      expect(response.status, name).toBe(200);
      const body = SCHEMAS[name].parse(await response.json());
      expect(body.data.provider, name).toBe('test-model');
      expect(body.meta.model).toEqual({ name: 'test-model', used: true, fallback: null });
      expect(body.data.prose, name).toContain('from the test model');
      if (name === 'analyst') {
        // The rules' plan fills the six steps; the model narrates from its facts and conclusion.
        const facts = body.data.facts as { planned_by: string; intents: string[]; conclusion: string };
        expect(facts.planned_by).toBe('rules');
        expect(facts.intents).toEqual(['stuck_transaction', 'send_timing']);
        expect(facts.conclusion).toMatch(/^Transaction [0-9a-f]{16}… is unconfirmed and /);
      }
    }
    expect(models.requests.every((r) => r.authorization === 'Bearer sk-test')).toBe(true);
    expect(before - (await balance())).toBe(Object.values(PRICES).reduce((a, b) => a + b, 0n));
  });

  it('lets the model add a step to the rules’ plan by tool call, the next block and the landscape among the tools', async () => {
    models.setBehaviour('tools');
    models.requests.length = 0;
    const { pay } = payer(3);
    const response = await pay(
      `${withModel.url}/api/v1/analyst?q=${encodeURIComponent('Which estimator can I trust? Look at the preview too.')}`,
    );
    expect(response.status).toBe(200);
    const { data } = AnalystBodySchema.parse(await response.json());
    expect(data.facts.planned_by).toBe('rules_and_model');
    expect(data.provider).toBe('test-model');
    expect(data.facts.steps.map((s) => [s.step, s.status, s.why])).toEqual([
      ['observatory', 'ok', 'the question is about how accurate estimates are'],
      ['next_block', 'ok', 'the question is about how accurate estimates are'],
      ['landscape', 'ok', 'the question is about how accurate estimates are'],
      ['preview', 'ok', 'chosen by the model'],
    ]);
    const offered = models.requests.flatMap((r) => r.body.tools?.map((t) => t.function.name) ?? []);
    expect(offered).toEqual(expect.arrayContaining(['next_block', 'landscape', 'observatory', 'preview']));
    // The model read the rules' conclusion among its facts.
    expect(models.requests[0]!.body.messages[1]!.content).toContain(
      `"conclusion":${JSON.stringify(data.facts.conclusion)}`,
    );
  });

  // The 429 goes last: it starts the cool-down.
  it.each([
    ['server_error', 'upstream_error'],
    ['malformed', 'malformed_response'],
    ['invent', 'ungrounded_numbers'],
    ['hang', 'timeout'],
    ['rate_limit', 'rate_limited'],
  ] as [ModelBehaviour, string][])(
    'falls back to the deterministic prose when the model answers %s, charging once',
    async (behaviour, reason) => {
      models.setBehaviour(behaviour);
      const { pay, balance } = payer(3);
      const before = await balance();
      const response = await pay(`${withModel.url}${paths().advice}`);
      expect(response.status).toBe(200);
      const body = FeeAdviceBodySchema.parse(await response.json());
      expect(body.data.provider).toBe('deterministic');
      expect(body.meta.model).toMatchObject({ name: 'test-model', used: false, fallback: { reason } });
      expect(before - (await balance())).toBe(10_000n);
    },
  );
});

describe('the AI rate limit', () => {
  it('answers 429 before any challenge once the AI routes’ own limit is reached', async () => {
    const limited = await startTestService({ AI_RATE_LIMIT_MAX: '2' }, { devnet, simulator });
    try {
      const statuses = [];
      for (let i = 0; i < 3; i += 1)
        statuses.push((await fetch(`${limited.url}/api/v1/ai/chat?q=fees`)).status);
      expect(statuses).toEqual([402, 402, 429]);
      // The limit is the AI routes' own: the preview is not limited by it.
      expect((await fetch(`${limited.url}/api/v1/fees/preview`)).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});
