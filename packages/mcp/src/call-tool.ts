import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { GateResponse, Outcome, TollboothGate } from '@tollbooth/core';
import { readMetaPayment, toToolRequestView } from './request-view';
import { type AnyTool, type ToolContext, toolRouteKey } from './tool';
import { refusalResult, toHandlerResponse, toToolResult } from './tool-result';

/** A tool call after its arguments were validated. */
export interface ValidatedCall {
  tool: AnyTool;
  arguments: Record<string, unknown>;
  meta: Readonly<Record<string, unknown>>;
  signal: AbortSignal;
  /** What the gate's hooks and the route's precondition see as the request's `raw`. */
  raw: unknown;
}

/**
 * Whether a gate answer refuses the payment itself (400 for a malformed payment or identifier, 413
 * for arguments too long to bind an identifier to): a tool call gets the challenge with its code.
 */
function isPaymentRefusal(status: number, code: string | undefined): code is string {
  if (status !== 400 && status !== 413) return false;
  return code !== undefined && (code.startsWith('payment_') || code === 'request_body_too_large');
}

/**
 * Runs a paid tool call through the payment gate, the way an HTTP adapter runs a request:
 * 1. the payment is read from `_meta` (refused with a challenge if malformed or another tool's);
 * 2. the gate decides (challenge, refusal, replay of the stored result, or proceed);
 * 3. on proceed the tool runs; a throw releases the payment, a result is settled (an `isError`
 *    result is released) and the gate's answer becomes the tool result.
 * Free tools run directly.
 */
export async function callTool(gate: TollboothGate, call: ValidatedCall): Promise<CallToolResult> {
  const { tool } = call;
  const context: ToolContext = { payment: undefined, signal: call.signal, meta: call.meta };
  if (tool.accepts === undefined) return tool.handler(call.arguments, context);

  const route = gate.routes.get(toolRouteKey(tool.name));
  if (!route) throw new Error(`the payment gate has no route for the paid tool ${tool.name} (toolRoutes)`);
  const resourceUrl = route.resourceUrl();
  const payment = readMetaPayment(call.meta, resourceUrl);
  if (payment.kind === 'refused') return refusalResult(route.challenge(resourceUrl, payment.code).body);

  const view = toToolRequestView({ name: tool.name, arguments: call.arguments, payment, raw: call.raw });
  const outcome = await gate.handle(view);
  if (outcome.kind === 'pass')
    throw new Error(`the payment gate let the paid tool ${tool.name} through unpaid (its route is missing)`);
  if (outcome.kind !== 'proceed') return answer(outcome.response);

  let result: CallToolResult;
  try {
    result = await tool.handler(call.arguments, { ...context, payment: outcome.payment });
  } catch (error) {
    await outcome.release();
    throw error;
  }
  const response = await outcome.settle(toHandlerResponse(result));
  return withTransaction(answer(response), response, gate, outcome);

  /** A gate answer as a tool result; a refusal about the payment itself as its challenge. */
  function answer(response: GateResponse): CallToolResult {
    const code = response.status === 400 || response.status === 413 ? codeOf(response) : undefined;
    if (isPaymentRefusal(response.status, code))
      return refusalResult(route!.challenge(resourceUrl, code).body);
    return toToolResult(response);
  }
}

/**
 * An uncertain settlement's result with the transaction the ledger knows of (a transfer broadcast
 * but not confirmed), so the agent can see it while it retries the exact payload.
 */
async function withTransaction(
  result: CallToolResult,
  response: GateResponse,
  gate: TollboothGate,
  outcome: Extract<Outcome, { kind: 'proceed' }>,
): Promise<CallToolResult> {
  if (response.status !== 502) return result;
  const entry = await gate.ledger.get(outcome.payment.identity).catch(() => undefined);
  const structured = result.structuredContent as { error?: Record<string, unknown> } | undefined;
  if (!entry?.transaction || !structured?.error) return result;
  const body = { ...structured, error: { ...structured.error, transaction: entry.transaction } };
  return { ...result, content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body };
}

function codeOf(response: GateResponse): string | undefined {
  try {
    const body = JSON.parse(Buffer.from(response.body).toString('utf8')) as { error?: { code?: unknown } };
    return typeof body.error?.code === 'string' ? body.error.code : undefined;
  } catch {
    return undefined;
  }
}
