import { DEFAULT_USD_ASSETS } from '../discovery/route-view';

/** What the page knows about a network beyond its CAIP-2 id. */
export interface PaywallNetwork {
  /** Display name, e.g. `Base`. */
  name?: string;
  /**
   * A transaction's page on a block explorer, `{hash}` standing for the hash, e.g.
   * `https://basescan.org/tx/{hash}`. Without it (or `null`, e.g. for a local chain that uses a
   * public chain id) the receipt shows the hash alone.
   */
  explorerTxUrl?: string | null;
  /**
   * What the page passes to `wallet_addEthereumChain` when the wallet does not know the network
   * (EIP-3085). Without it (or `null`) the page asks the payer to add the network by hand.
   */
  addChain?: null | {
    chainName: string;
    rpcUrls: readonly string[];
    nativeCurrency: { name: string; symbol: string; decimals: number };
    blockExplorerUrls?: readonly string[];
  };
}

/**
 * The browser paywall (`PaymentGateOptions.paywall`): a request to a paid route that asks for
 * HTML and not JSON gets a page that pays with the browser's wallet, with the same 402 status and
 * `PAYMENT-REQUIRED` header machine clients get. See docs/paywall.md.
 */
export interface PaywallOptions {
  /** Shown above the offer and in the page title, e.g. `Bitcoin fee service`. Default none. */
  appName?: string;
  /**
   * Per CAIP-2 network, merged over the built-in names, explorers and chain parameters of
   * Ethereum, Base and Base Sepolia (`PAYWALL_NETWORKS`).
   */
  networks?: Readonly<Record<string, PaywallNetwork>>;
  /**
   * Assets priced in US dollars: address (lower-case) → decimals, for showing `$0.001` beside
   * the atomic amount. Default `DEFAULT_USD_ASSETS` (USDC on Base and Base Sepolia).
   */
  usdAssets?: Readonly<Record<string, number>>;
}

const ETH = { name: 'Ether', symbol: 'ETH', decimals: 18 } as const;

/** The networks the page names without configuration. */
export const PAYWALL_NETWORKS: Readonly<Record<string, PaywallNetwork>> = {
  'eip155:1': { name: 'Ethereum', explorerTxUrl: 'https://etherscan.io/tx/{hash}' },
  'eip155:8453': {
    name: 'Base',
    explorerTxUrl: 'https://basescan.org/tx/{hash}',
    addChain: {
      chainName: 'Base',
      rpcUrls: ['https://mainnet.base.org'],
      nativeCurrency: ETH,
      blockExplorerUrls: ['https://basescan.org'],
    },
  },
  'eip155:84532': {
    name: 'Base Sepolia',
    explorerTxUrl: 'https://sepolia.basescan.org/tx/{hash}',
    addChain: {
      chainName: 'Base Sepolia',
      rpcUrls: ['https://sepolia.base.org'],
      nativeCurrency: ETH,
      blockExplorerUrls: ['https://sepolia.basescan.org'],
    },
  },
};

/** The paywall's settings once defaults are merged. */
export interface ResolvedPaywallOptions {
  appName: string | undefined;
  networks: Readonly<Record<string, PaywallNetwork>>;
  usdAssets: Readonly<Record<string, number>>;
}

/** What is wrong with `paywall` options (an empty list when nothing is). */
export function checkPaywallOptions(paywall: unknown): string[] {
  if (paywall === undefined || typeof paywall === 'boolean') return [];
  if (paywall === null || typeof paywall !== 'object') return ['paywall must be true, false or an object'];
  const problems: string[] = [];
  const { appName, networks, usdAssets } = paywall as Record<string, unknown>;
  if (appName !== undefined && typeof appName !== 'string') problems.push('paywall.appName must be a string');
  if (networks !== undefined) {
    if (networks === null || typeof networks !== 'object')
      problems.push('paywall.networks must be an object');
    else {
      for (const [network, value] of Object.entries(networks)) {
        if (!/^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/.test(network))
          problems.push(`paywall.networks: "${network}" is not a CAIP-2 network id`);
        const url = (value as PaywallNetwork | undefined)?.explorerTxUrl;
        if (
          url !== undefined &&
          url !== null &&
          (typeof url !== 'string' || !/^https?:\/\/.*\{hash\}/.test(url))
        )
          problems.push(
            `paywall.networks["${network}"].explorerTxUrl must be an http(s) URL containing {hash}`,
          );
      }
    }
  }
  if (usdAssets !== undefined) {
    if (usdAssets === null || typeof usdAssets !== 'object')
      problems.push('paywall.usdAssets must be an object');
    else {
      for (const [asset, decimals] of Object.entries(usdAssets)) {
        if (!Number.isInteger(decimals) || (decimals as number) < 0 || (decimals as number) > 36)
          problems.push(`paywall.usdAssets["${asset}"] must be an integer number of decimals from 0 to 36`);
      }
    }
  }
  return problems;
}

/** Merges `paywall` options over the defaults (the options are checked already). */
export function resolvePaywallOptions(paywall: PaywallOptions | true): ResolvedPaywallOptions {
  const options = paywall === true ? {} : paywall;
  const networks: Record<string, PaywallNetwork> = { ...PAYWALL_NETWORKS };
  for (const [network, value] of Object.entries(options.networks ?? {})) {
    networks[network] = { ...networks[network], ...value };
  }
  const usdAssets: Record<string, number> = { ...DEFAULT_USD_ASSETS };
  for (const [asset, decimals] of Object.entries(options.usdAssets ?? {}))
    usdAssets[asset.toLowerCase()] = decimals;
  return { appName: options.appName, networks, usdAssets };
}
