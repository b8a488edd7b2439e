import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { decodeHeaderJson, fromAtomicAmount } from '@tollbooth/core';
import { privateKeyToAccount } from 'viem/accounts';
import { check, checkEqual } from '../audit-failure';
import { paymentFor } from '../faults/server-payment';
import type { McpAudit, McpAuditContext } from './types';

const PAYMENT = 'x402/payment';
const RECEIPT = 'x402/payment-response';

/** The PaymentRequired of a result: `isError`, in `structuredContent` and as the JSON of `content[0].text`. */
function challengeOf(result: CallToolResult, what: string): Record<string, unknown> {
  check(result.isError === true, `${what}: the result is not isError`);
  const structured = result.structuredContent as Record<string, unknown> | undefined;
  check(
    structured !== undefined && Array.isArray(structured['accepts']),
    `${what}: no PaymentRequired in structuredContent`,
  );
  const first = result.content[0];
  check(first?.type === 'text', `${what}: content[0] is no text`);
  let parsed: unknown;
  try {
    parsed = JSON.parse((first as { text: string }).text);
  } catch {
    parsed = undefined;
  }
  checkEqual(
    JSON.stringify(parsed),
    JSON.stringify(structured),
    `${what}: content[0].text against structuredContent`,
  );
  return structured!;
}

/** A payment object for the tool's challenge, signed by the payer. */
async function payment(ctx: McpAuditContext): Promise<Record<string, unknown>> {
  const challenge = challengeOf(
    await ctx.call({ name: ctx.tool, arguments: ctx.arguments }),
    'the unpaid call',
  );
  const { header } = await paymentFor(ctx.chain, challenge);
  return decodeHeaderJson(header) as Record<string, unknown>;
}

const payer = (ctx: McpAuditContext) => privateKeyToAccount(ctx.chain.config.payers[0]!).address;
const paidCall = (ctx: McpAuditContext, pay: Record<string, unknown>) => ({
  name: ctx.tool,
  arguments: ctx.arguments,
  _meta: { [PAYMENT]: pay },
});

/** The successful receipt of a paid result. */
function receiptOf(result: CallToolResult, what: string): { transaction: string } {
  check(
    result.isError !== true,
    `${what}: an isError result: ${JSON.stringify(result.structuredContent ?? result.content).slice(0, 200)}`,
  );
  const receipt = result._meta?.[RECEIPT] as { success?: unknown; transaction?: unknown } | undefined;
  check(
    receipt?.success === true && typeof receipt.transaction === 'string',
    `${what}: no successful receipt in _meta["${RECEIPT}"]`,
  );
  return receipt as { transaction: string };
}

/** Calls with the payment and measures what the payer was charged on chain. */
async function charged<T>(
  ctx: McpAuditContext,
  act: () => Promise<T>,
): Promise<{ value: T; charged: bigint }> {
  const before = await ctx.chain.balanceOf(payer(ctx));
  const value = await act();
  return { value, charged: before - (await ctx.chain.balanceOf(payer(ctx))) };
}

/**
 * The MCP audits: the x402 MCP transport's tool-result binding, and Tollbooth's failure semantics
 * on a paid tool call (docs/mcp.md#failure-semantics), runnable against any MCP server that sells
 * a tool on a chain the kit's payer can pay on.
 */
export const MCP_AUDITS: readonly McpAudit[] = [
  {
    id: 'AMCP-01',
    level: 'MUST',
    profile: 'x402',
    sentence:
      "MUST answer an unpaid call of a paid tool with an isError result holding the PaymentRequired in structuredContent and as the JSON text of content[0], valid against the tool's listed output schema",
    async run(ctx) {
      await ctx.list();
      const challenge = challengeOf(
        await ctx.call({ name: ctx.tool, arguments: ctx.arguments }),
        'the unpaid call',
      );
      checkEqual(challenge['x402Version'], 2, 'x402Version of the challenge');
    },
  },
  {
    id: 'AMCP-02',
    level: 'MUST',
    profile: 'x402',
    sentence: `MUST answer a valid payment in _meta["${PAYMENT}"] with the tool's result and a successful SettleResponse in _meta["${RECEIPT}"], the payer charged exactly the price on chain`,
    async run(ctx) {
      const pay = await payment(ctx);
      const { value, charged: spent } = await charged(ctx, () => ctx.call(paidCall(ctx, pay)));
      receiptOf(value, 'the paid call');
      checkEqual(
        spent.toString(),
        String((pay['accepted'] as { amount: string }).amount),
        'atomic units charged',
      );
    },
  },
  {
    id: 'AMCP-03',
    level: 'MUST',
    profile: 'tollbooth',
    sentence: 'MUST answer the same payment sent again with the same result, byte for byte, charging once',
    async run(ctx) {
      const pay = await payment(ctx);
      const { value, charged: spent } = await charged(ctx, async () => [
        await ctx.call(paidCall(ctx, pay)),
        await ctx.call(paidCall(ctx, pay)),
      ]);
      receiptOf(value[0]!, 'the first call');
      checkEqual(JSON.stringify(value[1]), JSON.stringify(value[0]), 'the retried result');
      checkEqual(
        spent.toString(),
        String((pay['accepted'] as { amount: string }).amount),
        'atomic units charged',
      );
    },
  },
  {
    id: 'AMCP-04',
    level: 'MUST',
    profile: 'tollbooth',
    sentence: 'MUST answer ten concurrent calls carrying one payment with one result, charging once',
    async run(ctx) {
      const pay = await payment(ctx);
      const { value, charged: spent } = await charged(ctx, () =>
        Promise.all(Array.from({ length: 10 }, () => ctx.call(paidCall(ctx, pay)))),
      );
      receiptOf(value[0]!, 'the first call');
      for (const result of value)
        checkEqual(JSON.stringify(result), JSON.stringify(value[0]), 'a concurrent result');
      checkEqual(
        spent.toString(),
        String((pay['accepted'] as { amount: string }).amount),
        'atomic units charged',
      );
    },
  },
  {
    id: 'AMCP-05',
    level: 'MUST',
    profile: 'tollbooth',
    sentence: `MUST answer a _meta["${PAYMENT}"] that is no object with the PaymentRequired naming a reason, never a JSON-RPC error`,
    async run(ctx) {
      const result = await ctx.call({
        name: ctx.tool,
        arguments: ctx.arguments,
        _meta: { [PAYMENT]: 'not an object' },
      });
      const challenge = challengeOf(result, 'the malformed payment');
      check(
        typeof challenge['error'] === 'string' && challenge['error'] !== 'payment_required',
        `the challenge names no reason (error: ${String(challenge['error'])})`,
      );
    },
  },
  {
    id: 'AMCP-06',
    level: 'SHOULD',
    profile: 'tollbooth',
    sentence:
      "SHOULD show a paid tool's price in tools/list, before any call (in its description or its _meta)",
    async run(ctx) {
      const listed = (await ctx.list()).find((tool) => tool.name === ctx.tool);
      check(listed !== undefined, `tools/list has no tool ${ctx.tool}`);
      const challenge = challengeOf(
        await ctx.call({ name: ctx.tool, arguments: ctx.arguments }),
        'the unpaid call',
      );
      const amount = String((challenge['accepts'] as Array<{ amount: string }>)[0]!.amount);
      const shown = `${listed!.description ?? ''} ${JSON.stringify(listed!._meta ?? {})}`;
      check(
        shown.includes(amount) || shown.includes(fromAtomicAmount(amount, 6)),
        `the listing shows neither ${amount} nor ${fromAtomicAmount(amount, 6)}`,
      );
    },
  },
  {
    id: 'AMCP-07',
    level: 'MUST',
    profile: 'tollbooth',
    needsFaults: true,
    sentence:
      'MUST answer a call whose settle answer was lost with settlement_uncertain and retry_exact_payment_payload, never fresh accepts, and serve the exact payload retried, charging once',
    async run(ctx) {
      const pay = await payment(ctx);
      const { value, charged: spent } = await charged(ctx, async () => {
        await ctx.faults!.setMode({ mode: 'settle-answer-dropped' });
        let first: CallToolResult;
        try {
          first = await ctx.call(paidCall(ctx, pay));
        } finally {
          await ctx.faults!.setMode({ mode: 'pass' });
        }
        const deadline = Date.now() + ctx.recoveryMs;
        let last = first;
        while (Date.now() < deadline && last.isError === true) {
          await new Promise((resolve) => setTimeout(resolve, 250));
          last = await ctx.call(paidCall(ctx, pay));
        }
        return { first, last };
      });
      const error = (value.first.structuredContent as { error?: Record<string, unknown> } | undefined)?.error;
      checkEqual(error?.['code'], 'settlement_uncertain', 'the code of the first answer');
      checkEqual(
        (error?.['retry'] as { instruction?: unknown } | undefined)?.instruction,
        'retry_exact_payment_payload',
        'its retry instruction',
      );
      check(!JSON.stringify(value.first).includes('"accepts"'), 'the uncertain answer offers fresh accepts');
      receiptOf(value.last, 'the retried payload');
      checkEqual(
        spent.toString(),
        String((pay['accepted'] as { amount: string }).amount),
        'atomic units charged',
      );
    },
  },
];
