import type { PaymentPayload } from '@tollbooth/core';
import type { LocalAccount } from 'viem';
import { createEvmPaymentSigner } from '../evm-signer';
import { describeAmount } from '../format-paid-response';
import { createPayingMcpClient, type PaidToolCall } from './paying-mcp-client';

const line = (label: string, value: string) => `${label.padEnd(12)}${value}`;

export interface ToolCallCommand {
  /** The MCP endpoint (streamable HTTP), e.g. `http://localhost:3000/mcp`. */
  url: string;
  tool: string;
  arguments: Record<string, unknown>;
  account: LocalAccount;
  /** Largest payment, atomic units. */
  maxAmount: bigint;
  verbose: boolean;
}

/**
 * `tollbooth-pay <mcp-url> --tool NAME`: connects with the MCP SDK's client over streamable HTTP,
 * calls the tool through the paying MCP client and returns the summary to print, and whether the
 * tool answered without an error.
 */
export async function runToolCall(command: ToolCallCommand): Promise<{ text: string; ok: boolean }> {
  // Loaded only for a tool call: the HTTP side of the command does not need the MCP SDK installed.
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = await import(
    '@modelcontextprotocol/sdk/client/streamableHttp.js'
  );
  const client = new Client({ name: 'tollbooth-pay', version: '0.1.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(command.url)));
  try {
    const payer = createPayingMcpClient({
      client,
      signer: createEvmPaymentSigner({ account: command.account }),
      maxAmountPerPayment: command.maxAmount,
      maxTotal: command.maxAmount,
    });
    const call = await payer.callTool({ name: command.tool, arguments: command.arguments });
    return { text: formatToolCall(call, command), ok: call.result.isError !== true };
  } finally {
    await client.close();
  }
}

/** The summary of a paid tool call: the result's kind, what was paid, the transaction, the result. */
export function formatToolCall(
  call: PaidToolCall,
  command: Pick<ToolCallCommand, 'tool' | 'account' | 'verbose'>,
): string {
  const { result, receipt } = call;
  const out: string[] = [];
  if (command.verbose && call.paymentRequired)
    out.push('payment required:', JSON.stringify(call.paymentRequired, null, 2), '');
  out.push(`tool ${command.tool}: ${result.isError === true ? 'error result' : 'result'}`);
  const accepted = (call.payload as PaymentPayload | undefined)?.accepted;
  if (!call.payload) out.push(line('payment', 'none asked'));
  else {
    if (accepted)
      out.push(line('amount', `${describeAmount(accepted)} on ${accepted.network}, to ${accepted.payTo}`));
    out.push(line('payer', receipt?.payer ?? command.account.address));
    if (!receipt) out.push(line('transaction', 'none (no receipt: not settled)'));
    else if (receipt.success) out.push(line('transaction', receipt.transaction));
    else
      out.push(line('transaction', `none: settlement failed (${receipt.errorReason ?? 'no reason given'})`));
    if (call.attempts > 1)
      out.push(line('attempts', `${call.attempts} (the same payload, resent after an uncertain settlement)`));
  }
  const text = result.content.map((item) => (item.type === 'text' ? item.text : `[${item.type}]`)).join('\n');
  out.push('', text);
  if (command.verbose && receipt) out.push('', 'receipt:', JSON.stringify(receipt, null, 2));
  return out.join('\n');
}
