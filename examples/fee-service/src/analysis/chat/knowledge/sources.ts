// The public sources the knowledge-base entries cite.

export const BIP = (n: number, title: string) => ({
  title: `BIP ${n}: ${title}`,
  url: `https://github.com/bitcoin/bips/blob/master/bip-${String(n).padStart(4, '0')}.mediawiki`,
});
export const DEV_GUIDE_TX = {
  title: 'Bitcoin developer guide: transactions',
  url: 'https://developer.bitcoin.org/devguide/transactions.html',
};
export const DEV_GUIDE_CHAIN = {
  title: 'Bitcoin developer guide: block chain',
  url: 'https://developer.bitcoin.org/devguide/block_chain.html',
};
export const DEV_GUIDE_P2P = {
  title: 'Bitcoin developer guide: P2P network (memory pool)',
  url: 'https://developer.bitcoin.org/devguide/p2p_network.html',
};
export const MEMPOOL_API = {
  title: 'mempool.space REST API documentation',
  url: 'https://mempool.space/docs/api/rest',
};
export const CORE_28 = {
  title: 'Bitcoin Core 28.0 release notes',
  url: 'https://bitcoincore.org/en/releases/28.0/',
};
export const CORE_RPC = {
  title: 'Bitcoin Core RPC reference: estimatesmartfee',
  url: 'https://developer.bitcoin.org/reference/rpc/estimatesmartfee.html',
};
export const WHITEPAPER = {
  title: 'Bitcoin: A Peer-to-Peer Electronic Cash System',
  url: 'https://bitcoin.org/bitcoin.pdf',
};
