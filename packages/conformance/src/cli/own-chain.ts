// --rpc-url, --asset, --payer-key, --pay-to, --submitter-key, --amount: the vendor's own chain
// (a testnet) instead of the devnet the kit starts, as the facilitator and mcp commands take them.
import { type Address, createPublicClient, type Hex, http } from 'viem';
import { type AuditChainConfig, eip3009Abi } from '../facilitator/chain';
import { ChainUnreachable } from '../facilitator/run';
import { UsageError } from './io';

/** The parseArgs options of the vendor's chain. */
export const OWN_CHAIN_OPTIONS = {
  'rpc-url': { type: 'string' },
  asset: { type: 'string' },
  'payer-key': { type: 'string', multiple: true },
  'pay-to': { type: 'string' },
  'submitter-key': { type: 'string' },
  amount: { type: 'string' },
} as const;

/** The options above as parseArgs gives them. */
export interface OwnChainValues {
  'rpc-url'?: string | undefined;
  asset?: string | undefined;
  'payer-key'?: string[] | undefined;
  'pay-to'?: string | undefined;
  'submitter-key'?: string | undefined;
  amount?: string | undefined;
}

/** The vendor's chain as given on the command line, before the node and the token are asked. */
export interface OwnChainOptions {
  rpcUrl: string;
  asset: Address;
  payers: Hex[];
  payTo: Address;
  submitter: Hex | undefined;
  amount: bigint | undefined;
}

/** Checks `value` is 0x and `bytes` bytes in hex, adding a problem naming the option if not. */
export function hexOption(value: string | undefined, name: string, bytes: number, problems: string[]) {
  if (value !== undefined && !new RegExp(`^0x[0-9a-fA-F]{${bytes * 2}}$`).test(value))
    problems.push(`${name} must be 0x and ${bytes * 2} hex digits`);
  return value as Hex | undefined;
}

/**
 * The vendor's chain when `--rpc-url` is given (every problem added to `problems`), undefined for
 * the kit's devnet (then the other options of this group are problems). `payTo` absent from
 * `required` falls back to the zero address (for audits that pay the server's own `payTo`).
 */
export function parseOwnChain(
  values: OwnChainValues,
  problems: string[],
  required: { payTo: boolean } = { payTo: true },
): OwnChainOptions | undefined {
  if (values['rpc-url'] === undefined) {
    for (const name of ['asset', 'pay-to', 'submitter-key', 'amount'] as const)
      if (values[name] !== undefined) problems.push(`--${name} needs --rpc-url`);
    if (values['payer-key']) problems.push('--payer-key needs --rpc-url');
    return undefined;
  }
  if (!values.asset) problems.push('--rpc-url needs --asset');
  if (required.payTo && !values['pay-to']) problems.push('--rpc-url needs --pay-to');
  if (!values['payer-key']?.length) problems.push('--rpc-url needs at least one --payer-key');
  if (values.amount !== undefined && !/^[1-9]\d*$/.test(values.amount))
    problems.push('--amount must be a positive integer');
  return {
    rpcUrl: values['rpc-url'],
    asset: hexOption(values.asset, '--asset', 20, problems) as Address,
    payers: (values['payer-key'] ?? []).map((k) => hexOption(k, '--payer-key', 32, problems)!),
    payTo: (hexOption(values['pay-to'], '--pay-to', 20, problems) ??
      '0x0000000000000000000000000000000000000000') as Address,
    submitter: hexOption(values['submitter-key'], '--submitter-key', 32, problems),
    amount:
      values.amount === undefined || !/^[1-9]\d*$/.test(values.amount) ? undefined : BigInt(values.amount),
  };
}

/** The vendor's chain: chain id from the node, the EIP-712 domain from the token. */
export async function ownChain(own: OwnChainOptions): Promise<AuditChainConfig> {
  const client = createPublicClient({ transport: http(own.rpcUrl) });
  let chainId: number;
  try {
    chainId = await client.getChainId();
  } catch (error) {
    throw new ChainUnreachable(
      `${own.rpcUrl}: ${error instanceof Error ? error.message.split('\n')[0] : error}`,
    );
  }
  const read = (functionName: 'name' | 'version') =>
    client.readContract({ address: own.asset, abi: eip3009Abi, functionName }).catch(() => {
      throw new UsageError(`the token at ${own.asset} has no ${functionName}() on chain ${chainId}`);
    });
  const [name, version] = await Promise.all([read('name'), read('version')]);
  return {
    rpcUrl: own.rpcUrl,
    chainId,
    token: { address: own.asset, name, version },
    payers: own.payers,
    payTo: own.payTo,
    ...(own.submitter ? { submitter: own.submitter } : {}),
    ...(own.amount ? { amount: own.amount } : {}),
  };
}
