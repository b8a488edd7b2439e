// A browser wallet for Playwright pages: an EIP-1193 provider (`window.ethereum`) injected into the
// page, whose requests run in the test process against the devnet. It signs typed data with a
// devnet key through viem, forwards reads to the devnet's RPC, and can be told to refuse like a
// person would (code 4001), to sit on another chain, or to be absent.
import type { Devnet } from '@tollbooth/devnet';
import type { BrowserContext } from 'playwright-core';
import type { Hex, TypedDataDomain } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

export interface WalletBehaviour {
  /** The key the wallet signs with. */
  privateKey: Hex;
  /** The chain the wallet is on at first. Default the devnet's. */
  chainId?: number;
  /** Refuse `eth_signTypedData_v4` (the person presses "Reject"). */
  refuseSignature?: boolean;
  /** Refuse `wallet_switchEthereumChain`. */
  refuseSwitch?: boolean;
  /** Fail every `eth_call` (a wallet whose RPC is down): the page cannot check the balance itself. */
  failReads?: boolean;
}

/** What the wallet was asked, to check that a refusal signed nothing and a retry signed once. */
export interface WalletLog {
  requests: string[];
  signatures: number;
  chainId: number;
}

interface RpcError {
  code: number;
  message: string;
}

const UINT_FIELDS = ['value', 'validAfter', 'validBefore'] as const;

/**
 * Installs the wallet in every page of `context`: `window.ethereum` with `request` and `on`,
 * answering from the test process. Returns the log of what the page asked.
 */
export async function installWallet(
  context: BrowserContext,
  devnet: Devnet,
  behaviour: WalletBehaviour,
): Promise<WalletLog> {
  const account = privateKeyToAccount(behaviour.privateKey);
  const log: WalletLog = { requests: [], signatures: 0, chainId: behaviour.chainId ?? devnet.chainId };
  const refuse = (message: string): { error: RpcError } => ({ error: { code: 4001, message } });

  async function answer(method: string, params: unknown[]): Promise<{ result?: unknown; error?: RpcError }> {
    log.requests.push(method);
    switch (method) {
      case 'eth_requestAccounts':
      case 'eth_accounts':
        return { result: [account.address] };
      case 'eth_chainId':
        return { result: `0x${log.chainId.toString(16)}` };
      case 'wallet_switchEthereumChain': {
        if (behaviour.refuseSwitch) return refuse('User rejected the request.');
        const wanted = Number.parseInt((params[0] as { chainId: string }).chainId, 16);
        if (wanted !== devnet.chainId) return { error: { code: 4902, message: 'Unrecognized chain ID' } };
        log.chainId = wanted;
        return { result: null };
      }
      case 'eth_call':
        if (behaviour.failReads) return { error: { code: -32603, message: 'RPC unavailable' } };
        if (log.chainId !== devnet.chainId) return { error: { code: -32603, message: 'wrong chain' } };
        return { result: await devnet.publicClient.request({ method: 'eth_call', params: params as never }) };
      case 'eth_signTypedData_v4': {
        if (behaviour.refuseSignature) return refuse('User rejected the request.');
        const [from, json] = params as [string, string];
        if (from.toLowerCase() !== account.address.toLowerCase())
          return { error: { code: 4100, message: 'unknown account' } };
        const typed = JSON.parse(json) as {
          domain: TypedDataDomain;
          types: Record<string, Array<{ name: string; type: string }>>;
          primaryType: string;
          message: Record<string, unknown>;
        };
        // A wallet takes uint256 values as decimal strings; viem wants bigints.
        const message = { ...typed.message };
        for (const field of UINT_FIELDS)
          if (typeof message[field] === 'string') message[field] = BigInt(message[field]);
        const { EIP712Domain: _domain, ...types } = typed.types;
        log.signatures += 1;
        return {
          result: await account.signTypedData({
            domain: typed.domain,
            types,
            primaryType: typed.primaryType,
            message,
          } as never),
        };
      }
      default:
        return { error: { code: 4200, message: `unsupported method ${method}` } };
    }
  }

  await context.exposeFunction('__devnetWallet', async (method: string, paramsJson: string) => {
    try {
      return await answer(method, JSON.parse(paramsJson ?? '[]') as unknown[]);
    } catch (error) {
      return { error: { code: -32603, message: error instanceof Error ? error.message : String(error) } };
    }
  });
  // Browser code as text: this project's TypeScript has no DOM types.
  await context.addInitScript(`(() => {
    const listeners = {};
    window.ethereum = {
      isDevnetWallet: true,
      async request({ method, params }) {
        const { result, error } = await window.__devnetWallet(method, JSON.stringify(params ?? []));
        if (error) throw Object.assign(new Error(error.message), { code: error.code });
        return result;
      },
      on(event, listener) { (listeners[event] ??= []).push(listener); },
      removeListener(event, listener) { listeners[event] = (listeners[event] ?? []).filter((l) => l !== listener); },
    };
  })()`);
  return log;
}
