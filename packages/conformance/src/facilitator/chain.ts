// What the facilitator audits read on chain: balances, `authorizationState`, the
// `AuthorizationUsed` and `Transfer` logs. A facilitator's answer is never taken as proof that
// money moved (or did not).
import {
  type Address,
  createPublicClient,
  createWalletClient,
  defineChain,
  type Hash,
  type Hex,
  http,
  type PublicClient,
  parseAbi,
  parseEventLogs,
  parseSignature,
  type TransactionReceipt,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { AuditFailure } from '../audit-failure';

/** The EIP-3009 functions and events the audits use (Circle's FiatTokenV2_2 and TollboothUSD alike). */
export const eip3009Abi = parseAbi([
  'function balanceOf(address account) view returns (uint256)',
  'function name() view returns (string)',
  'function version() view returns (string)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
]);

/** The chain the audited facilitator settles on, and the accounts the audits pay with. */
export interface AuditChainConfig {
  rpcUrl: string;
  chainId: number;
  /** The EIP-3009 token and its EIP-712 domain. */
  token: { address: Address; name: string; version: string };
  /** Private keys holding the token; the first pays in every audit. */
  payers: readonly Hex[];
  /** Receives the payments. */
  payTo: Address;
  /**
   * A key with gas the audits may send transactions from (to use an authorization on chain
   * behind the facilitator's back). Without it those audits settle through the facilitator.
   */
  submitter?: Hex;
  /** Atomic units each payment transfers. Default 1000 (0.001 of a 6-decimal token). */
  amount?: bigint;
  /** How long a settlement transaction the node knows may take to be mined. Default 30 000 ms. */
  receiptWaitMs?: number;
  /**
   * How long a transaction hash the node has never seen may take to appear (an RPC behind a load
   * balancer lags). Default 5 000 ms.
   */
  unknownTransactionWaitMs?: number;
}

/** One EIP-3009 authorization, values as the wire carries them (decimal strings, hex nonce). */
export interface Authorization {
  from: Address;
  to: Address;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: Hex;
}

export interface AuditChain {
  readonly config: AuditChainConfig;
  readonly network: `eip155:${number}`;
  readonly amount: bigint;
  readonly client: PublicClient;
  /** The block the run started at; log searches start there. */
  startBlock: bigint;
  balanceOf(address: Address): Promise<bigint>;
  /** Whether the token counts the authorization as used (or canceled). */
  authorizationUsed(authorizer: Address, nonce: Hex): Promise<boolean>;
  /** `AuthorizationUsed` logs of one authorization since the run started. */
  usedLogs(authorizer: Address, nonce: Hex): Promise<number>;
  /**
   * The receipt of a transaction: waits while the node knows it (pending) up to `receiptWaitMs`,
   * and for a hash it has never seen up to `unknownTransactionWaitMs`; `undefined` if none came.
   */
  receipt(hash: Hash): Promise<TransactionReceipt | undefined>;
  /** Uses an authorization on chain from the submitter key (not through the facilitator). */
  submit(authorization: Authorization, signature: Hex): Promise<Hash>;
}

export function createAuditChain(config: AuditChainConfig): AuditChain {
  const chain = defineChain({
    id: config.chainId,
    name: `audited chain ${config.chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [config.rpcUrl] } },
  });
  const client = createPublicClient({ chain, transport: http(config.rpcUrl), pollingInterval: 100 });
  const token = config.token.address;
  const view: AuditChain = {
    config,
    network: `eip155:${config.chainId}`,
    amount: config.amount ?? 1000n,
    client: client as PublicClient,
    startBlock: 0n,
    balanceOf: (address) =>
      client.readContract({ address: token, abi: eip3009Abi, functionName: 'balanceOf', args: [address] }),
    authorizationUsed: (authorizer, nonce) =>
      client.readContract({
        address: token,
        abi: eip3009Abi,
        functionName: 'authorizationState',
        args: [authorizer, nonce],
      }),
    async usedLogs(authorizer, nonce) {
      const logs = await client.getContractEvents({
        address: token,
        abi: eip3009Abi,
        eventName: 'AuthorizationUsed',
        args: { authorizer, nonce },
        fromBlock: view.startBlock,
      });
      return logs.length;
    },
    async receipt(hash) {
      const started = Date.now();
      const pendingLimit = config.receiptWaitMs ?? 30_000;
      const unknownLimit = config.unknownTransactionWaitMs ?? 5_000;
      for (;;) {
        const receipt = await client.getTransactionReceipt({ hash }).catch(() => undefined);
        if (receipt) return receipt;
        const known = await client.getTransaction({ hash }).then(
          () => true,
          () => false,
        );
        if (Date.now() - started >= (known ? pendingLimit : unknownLimit)) return undefined;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async submit(authorization, signature) {
      if (!config.submitter) throw new AuditFailure('no submitter key to use an authorization on chain');
      const wallet = createWalletClient({
        account: privateKeyToAccount(config.submitter),
        chain,
        transport: http(config.rpcUrl),
      });
      const { v, r, s, yParity } = parseSignature(signature);
      const hash = await wallet.writeContract({
        address: token,
        abi: eip3009Abi,
        functionName: 'transferWithAuthorization',
        args: [
          authorization.from,
          authorization.to,
          BigInt(authorization.value),
          BigInt(authorization.validAfter),
          BigInt(authorization.validBefore),
          authorization.nonce,
          Number(v ?? BigInt(yParity + 27)),
          r,
          s,
        ],
      });
      const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 100 });
      if (receipt.status !== 'success') throw new Error(`the audit's own transfer ${hash} reverted`);
      return hash;
    },
  };
  return view;
}

/** What a settlement transaction did to one authorization, read from its receipt. */
export interface SettlementEffects {
  status: 'success' | 'reverted';
  from: Address;
  /** `Transfer` logs of the token from the payer to payTo, with their values. */
  transfers: bigint[];
  /** `AuthorizationUsed` logs of the token for the authorization. */
  used: number;
}

export function effectsOf(
  chain: AuditChain,
  receipt: TransactionReceipt,
  authorization: Authorization,
): SettlementEffects {
  const token = chain.config.token.address.toLowerCase();
  const logs = parseEventLogs({
    abi: eip3009Abi,
    logs: receipt.logs.filter((log) => log.address.toLowerCase() === token),
  });
  const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
  const transfers: bigint[] = [];
  let used = 0;
  for (const log of logs) {
    if (
      log.eventName === 'Transfer' &&
      same(log.args.from, authorization.from) &&
      same(log.args.to, authorization.to)
    ) {
      transfers.push(log.args.value);
    }
    if (
      log.eventName === 'AuthorizationUsed' &&
      same(log.args.authorizer, authorization.from) &&
      same(log.args.nonce, authorization.nonce)
    ) {
      used += 1;
    }
  }
  return { status: receipt.status, from: receipt.from, transfers, used };
}
