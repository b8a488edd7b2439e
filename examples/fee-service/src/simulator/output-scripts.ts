// Reading an output script the way Esplora shows it: its type name and its mainnet address.
import * as btc from '@scure/btc-signer';

/** The script type of an output script, as Esplora names it. */
export function esploraScriptType(script: Uint8Array): string {
  if (
    script.length === 4 &&
    script[0] === 0x51 &&
    script[1] === 0x02 &&
    script[2] === 0x4e &&
    script[3] === 0x73
  )
    return 'anchor';
  if (script[0] === 0x6a) return 'op_return';
  try {
    const decoded = btc.OutScript.decode(script);
    switch (decoded.type) {
      case 'wpkh':
        return 'v0_p2wpkh';
      case 'wsh':
        return 'v0_p2wsh';
      case 'tr':
        return 'v1_p2tr';
      case 'pkh':
        return 'p2pkh';
      case 'sh':
        return 'p2sh';
      case 'pk':
        return 'p2pk';
      case 'ms':
        return 'multisig';
      default:
        return 'unknown';
    }
  } catch {
    return 'unknown';
  }
}

/** The mainnet address of an output script, when it has one. */
export function addressOf(script: Uint8Array): string | undefined {
  try {
    const decoded = btc.OutScript.decode(script);
    if (
      decoded.type === 'p2a' ||
      decoded.type === 'unknown' ||
      decoded.type === 'ms' ||
      decoded.type === 'pk'
    )
      return undefined;
    return btc.Address(btc.NETWORK).encode(decoded);
  } catch {
    return undefined;
  }
}
