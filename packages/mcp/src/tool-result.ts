import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { decodeHeaderJson, type GateResponse, type HandlerResponse } from '@tollbooth/core';
import { PAYMENT_RESPONSE_META_KEY, V1_PAYMENT_RESPONSE_META_KEY } from './meta-keys';

/**
 * The media type of a tool's own result as the gate stores it: what tells it apart from the
 * gate's answers (a challenge, an Error body) when it comes back, settled or replayed.
 */
export const TOOL_RESULT_MEDIA_TYPE = 'application/vnd.tollbooth.mcp-tool-result+json';

/** The status a tool's result is stored with: 200, or 500 for `isError` (never settled). */
const FAILED_TOOL_STATUS = 500;

/**
 * A tool's result as the gate's handler response: its JSON (without `_meta` receipt keys, which
 * are the gate's to add) as the body, `isError` as a status the gate never settles.
 */
export function toHandlerResponse(result: CallToolResult): HandlerResponse {
  const meta = result._meta;
  let stored: CallToolResult = result;
  if (meta && (PAYMENT_RESPONSE_META_KEY in meta || V1_PAYMENT_RESPONSE_META_KEY in meta)) {
    const { [PAYMENT_RESPONSE_META_KEY]: _v2, [V1_PAYMENT_RESPONSE_META_KEY]: _v1, ...rest } = meta;
    stored = { ...result, _meta: rest };
  }
  return {
    status: result.isError === true ? FAILED_TOOL_STATUS : 200,
    headers: { 'content-type': TOOL_RESULT_MEDIA_TYPE },
    body: Buffer.from(JSON.stringify(stored), 'utf8'),
  };
}

/** Whether a gate response carries a tool's own result (settled, replayed or released). */
export function isToolResult(response: GateResponse): boolean {
  return response.headers['content-type'] === TOOL_RESULT_MEDIA_TYPE;
}

/**
 * The tool result of a gate response: a tool's own result as stored; any other answer (a 402's
 * PaymentRequired, an Error body) as an `isError` result with the object in `structuredContent`
 * and its JSON text in `content[0]` (the x402 MCP transport's tool-result binding). A settlement
 * receipt in the response's `PAYMENT-RESPONSE` (or v1 `X-PAYMENT-RESPONSE`) goes into `_meta`.
 */
export function toToolResult(response: GateResponse): CallToolResult {
  const text = Buffer.from(response.body).toString('utf8');
  let result: CallToolResult;
  if (isToolResult(response)) {
    result = JSON.parse(text) as CallToolResult;
  } else {
    result = {
      content: [{ type: 'text', text }],
      structuredContent: JSON.parse(text) as Record<string, unknown>,
      isError: true,
    };
  }
  const receipt = receiptOf(response);
  if (receipt) result._meta = { ...result._meta, [receipt.key]: receipt.value };
  return result;
}

/** The answer of a refusal whose body is given (a challenge built for a code). */
export function refusalResult(body: Uint8Array): CallToolResult {
  const text = Buffer.from(body).toString('utf8');
  return {
    content: [{ type: 'text', text }],
    structuredContent: JSON.parse(text) as Record<string, unknown>,
    isError: true,
  };
}

function receiptOf(response: GateResponse): { key: string; value: unknown } | undefined {
  const v2 = response.headers['payment-response'];
  if (v2 !== undefined) return { key: PAYMENT_RESPONSE_META_KEY, value: decodeHeaderJson(v2) };
  const v1 = response.headers['x-payment-response'];
  if (v1 !== undefined) return { key: V1_PAYMENT_RESPONSE_META_KEY, value: decodeHeaderJson(v1) };
  return undefined;
}
