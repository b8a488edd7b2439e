import { type Address, type Hex, toHex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { ANVIL_MNEMONIC } from './constants';

/** A local test account: address and private key (never use these keys on a real network). */
export interface DevnetAccount {
  readonly address: Address;
  readonly privateKey: Hex;
}

const cache = new Map<number, DevnetAccount>();

/**
 * The account at `index` of anvil's default mnemonic (`m/44'/60'/0'/0/index`).
 * @example anvilAccount(0).address // 0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266
 */
export function anvilAccount(index: number): DevnetAccount {
  let account = cache.get(index);
  if (!account) {
    const hd = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: index });
    const key = hd.getHdKey().privateKey;
    if (!key) throw new Error(`cannot derive the private key of anvil account ${index}`);
    account = { address: hd.address, privateKey: toHex(key) };
    cache.set(index, account);
  }
  return account;
}
