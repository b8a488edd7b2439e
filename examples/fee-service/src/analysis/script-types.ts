import * as btc from '@scure/btc-signer';

/**
 * The kinds of output script the explainers name. `anchor` is BIP 433's pay-to-anchor
 * (`OP_1 <0x4e73>`), the keyless output that lets anyone bump a transaction by CPFP.
 */
export const SCRIPT_KINDS = [
  'p2pkh',
  'p2sh',
  'p2wpkh',
  'p2wsh',
  'p2tr',
  'p2pk',
  'multisig',
  'op_return',
  'anchor',
  'unknown',
] as const;
export type ScriptKind = (typeof SCRIPT_KINDS)[number];

/** An input's kind: the kind of the output it spends, with P2SH-wrapped SegWit told apart. */
export type InputKind = ScriptKind | 'p2sh-p2wpkh' | 'p2sh-p2wsh' | 'coinbase';

const DECODED_KIND: Record<string, ScriptKind> = {
  pkh: 'p2pkh',
  sh: 'p2sh',
  wpkh: 'p2wpkh',
  wsh: 'p2wsh',
  tr: 'p2tr',
  pk: 'p2pk',
  ms: 'multisig',
  p2a: 'anchor',
};

/** Classifies an output script (scriptPubKey) by its exact template. */
export function classifyOutputScript(script: Uint8Array): ScriptKind {
  // OP_RETURN outputs are provably unspendable whatever follows; btc-signer has no template for them.
  if (script.length > 0 && script[0] === 0x6a) return 'op_return';
  let decoded: { type: string } | undefined;
  try {
    decoded = btc.OutScript.decode(script);
  } catch {
    return 'unknown';
  }
  return DECODED_KIND[decoded?.type ?? ''] ?? 'unknown';
}

/**
 * Classifies an input from the script of the output it spends and its own scriptSig: a P2SH
 * output whose scriptSig is a single push of a version-0 witness program is wrapped SegWit.
 */
export function classifyInput(prevoutScript: Uint8Array, scriptSig: Uint8Array): InputKind {
  const kind = classifyOutputScript(prevoutScript);
  if (kind !== 'p2sh') return kind;
  // 0x16 = push 22 bytes (0x00 0x14 <20>); 0x22 = push 34 bytes (0x00 0x20 <32>).
  if (scriptSig.length === 23 && scriptSig[0] === 0x16 && scriptSig[1] === 0x00 && scriptSig[2] === 0x14) {
    return 'p2sh-p2wpkh';
  }
  if (scriptSig.length === 35 && scriptSig[0] === 0x22 && scriptSig[1] === 0x00 && scriptSig[2] === 0x20) {
    return 'p2sh-p2wsh';
  }
  return 'p2sh';
}

/** A mainnet address for an output, when its script has one. */
export function addressOf(script: Uint8Array): string | null {
  try {
    const decoded = btc.OutScript.decode(script);
    if (!decoded || !['pkh', 'sh', 'wpkh', 'wsh', 'tr'].includes(decoded.type)) return null;
    return btc.Address(btc.NETWORK).encode(decoded);
  } catch {
    return null;
  }
}
