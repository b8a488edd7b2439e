/**
 * The chat resource's knowledge base: short entries written for this project in its own words.
 * Each states facts that can be checked in the public sources it cites. `live` names the live
 * figures worth adding when the entry answers a question (see {@link LiveFigureGroup}).
 */

/** Groups of live figures from the validated snapshot. */
export type LiveFigureGroup = 'tiers' | 'mempool' | 'next_block' | 'tip';

export interface KnowledgeEntry {
  id: string;
  title: string;
  text: string;
  keywords: string[];
  live: LiveFigureGroup[];
  sources: { title: string; url: string }[];
}

const BIP = (n: number, title: string) => ({
  title: `BIP ${n}: ${title}`,
  url: `https://github.com/bitcoin/bips/blob/master/bip-${String(n).padStart(4, '0')}.mediawiki`,
});
const DEV_GUIDE_TX = { title: 'Bitcoin developer guide: transactions', url: 'https://developer.bitcoin.org/devguide/transactions.html' };
const DEV_GUIDE_CHAIN = { title: 'Bitcoin developer guide: block chain', url: 'https://developer.bitcoin.org/devguide/block_chain.html' };
const DEV_GUIDE_P2P = { title: 'Bitcoin developer guide: P2P network (memory pool)', url: 'https://developer.bitcoin.org/devguide/p2p_network.html' };
const MEMPOOL_API = { title: 'mempool.space REST API documentation', url: 'https://mempool.space/docs/api/rest' };
const CORE_28 = { title: 'Bitcoin Core 28.0 release notes', url: 'https://bitcoincore.org/en/releases/28.0/' };
const CORE_RPC = { title: 'Bitcoin Core RPC reference: estimatesmartfee', url: 'https://developer.bitcoin.org/reference/rpc/estimatesmartfee.html' };
const WHITEPAPER = { title: 'Bitcoin: A Peer-to-Peer Electronic Cash System', url: 'https://bitcoin.org/bitcoin.pdf' };

export const KNOWLEDGE_BASE: readonly KnowledgeEntry[] = [
  {
    id: 'fee-rate',
    title: 'What a fee rate is',
    text: 'A transaction does not state its fee: the fee is whatever the inputs hold beyond what the outputs pay. Miners have limited block space, so they rank transactions by fee per unit of space, the fee rate, written in satoshis per virtual byte (sat/vB). Two transactions with the same fee but different sizes are not equally attractive: the smaller one pays the higher rate.',
    keywords: ['fee', 'fees', 'rate', 'sat/vb', 'satoshi', 'cost', 'price', 'expensive', 'cheap'],
    live: ['tiers'],
    sources: [DEV_GUIDE_TX, BIP(141, 'Segregated Witness')],
  },
  {
    id: 'vsize-weight',
    title: 'Virtual size, weight and the SegWit discount',
    text: 'Since SegWit a block is limited to 4,000,000 weight units. Bytes outside the witness count four weight units each, witness bytes count one. A transaction’s virtual size is its weight divided by four, rounded up, so one block holds at most 1,000,000 vB. Signatures live in the witness for SegWit and Taproot inputs, which is why those inputs cost fewer vbytes than legacy ones.',
    keywords: ['vsize', 'vbyte', 'vbytes', 'weight', 'segwit', 'witness', 'discount', 'size', 'block size'],
    live: [],
    sources: [BIP(141, 'Segregated Witness')],
  },
  {
    id: 'mempool',
    title: 'The mempool',
    text: 'Every node keeps the valid transactions it has heard of but that are not yet in a block: its memory pool. There is no single mempool; each node’s can differ. Bitcoin Core limits its mempool to 300 MB of memory by default; when it is full it evicts the lowest fee-rate transactions and raises the minimum rate it accepts, and it drops transactions that stay unconfirmed for two weeks (336 hours) by default.',
    keywords: ['mempool', 'memory pool', 'unconfirmed', 'pending', 'backlog', 'congestion', 'purge', 'evict', 'expire'],
    live: ['mempool', 'tiers'],
    sources: [DEV_GUIDE_P2P],
  },
  {
    id: 'fee-tiers',
    title: 'Fee estimate tiers: fastest, half hour, hour, economy, minimum',
    text: 'mempool.space publishes five recommended rates. Fastest aims at the next block, half hour at about three blocks, hour at about six, economy at a day or so, and minimum is the lowest rate nodes relay and keep. They are computed from the current mempool projected into blocks, so they move with every new transaction and block; they are estimates, not promises.',
    keywords: ['tier', 'tiers', 'fastest', 'half hour', 'hour', 'economy', 'minimum', 'recommended', 'estimate', 'estimates'],
    live: ['tiers', 'next_block'],
    sources: [MEMPOOL_API],
  },
  {
    id: 'estimatesmartfee',
    title: 'Bitcoin Core’s fee estimator',
    text: 'Bitcoin Core’s estimatesmartfee looks at how long transactions at each rate took to confirm in past blocks and answers a rate for a confirmation target in blocks. It answers in BTC per kilo-virtual-byte: multiply by 100,000 for sat/vB. It has an economical mode, the default since version 28.0, and a conservative mode that reacts more slowly to falling fees.',
    keywords: ['estimatesmartfee', 'bitcoin core', 'estimator', 'conservative', 'economical', 'target', 'rpc'],
    live: ['tiers'],
    sources: [CORE_RPC, CORE_28],
  },
  {
    id: 'next-block',
    title: 'Getting into the next block',
    text: 'To predict the next block, sort the mempool by fee rate, counting a transaction together with the unconfirmed parents it needs, and fill 1,000,000 vB from the top. The lowest rate that still fits is the next-block floor. When the whole mempool fits in one block, anything above the minimum relay rate gets in. Miners may still choose differently, and a block can arrive in seconds or take an hour.',
    keywords: ['next block', 'template', 'projected', 'floor', 'mined', 'miner', 'fastest', 'confirm', 'getblocktemplate'],
    live: ['next_block', 'tiers', 'mempool'],
    sources: [MEMPOOL_API, DEV_GUIDE_CHAIN],
  },
  {
    id: 'block-interval',
    title: 'How often blocks arrive',
    text: 'Blocks come about every ten minutes on average, but the gap between two blocks is random: finding one is a lottery with a constant chance per second, so waits are roughly exponential. About one block in seven takes more than twenty minutes, and an hour or more without a block happens about ten times a month. Every 2,016 blocks the difficulty is adjusted so that the average stays near ten minutes.',
    keywords: ['interval', 'time', 'ten minutes', 'how long', 'wait', 'difficulty', 'adjustment', 'block time'],
    live: ['tip'],
    sources: [DEV_GUIDE_CHAIN, WHITEPAPER],
  },
  {
    id: 'subsidy',
    title: 'Block subsidy and halvings',
    text: 'A miner’s reward is the block subsidy plus the fees of the transactions it includes. The subsidy started at 50 BTC and halves every 210,000 blocks: it has been 3.125 BTC since block 840,000 (April 2024) and becomes 1.5625 BTC at block 1,050,000. As the subsidy shrinks, fees become a larger share of what pays for security.',
    keywords: ['subsidy', 'halving', 'reward', 'coinbase', 'miner revenue', 'issuance', 'supply'],
    live: ['tip'],
    sources: [WHITEPAPER, DEV_GUIDE_CHAIN],
  },
  {
    id: 'confirmations',
    title: 'Confirmations',
    text: 'A transaction has one confirmation when it is in a block, and one more with every block built on top. Each confirmation makes reversing it far more expensive. Many services wait for one to six confirmations depending on the amount. A one-block reorganisation, where a competing block wins, happens occasionally; deeper ones are very rare.',
    keywords: ['confirmation', 'confirmations', 'confirmed', 'reorg', 'reorganisation', 'final', 'settle', 'depth'],
    live: ['tip'],
    sources: [DEV_GUIDE_CHAIN],
  },
  {
    id: 'rbf',
    title: 'Replace-by-fee (RBF)',
    text: 'An unconfirmed transaction can be replaced by a new version spending at least one of the same inputs that pays a higher fee: the replacement must pay more in total than what it replaces plus its own size at the incremental relay rate. BIP 125 lets a sender signal this with an input sequence below 0xfffffffe. Since Bitcoin Core 28.0 nodes accept replacements by default even without the signal (full RBF), so an unconfirmed payment is never final.',
    keywords: ['rbf', 'replace', 'replacement', 'bump', 'bip125', 'full rbf', 'sequence', 'speed up', 'accelerate'],
    live: ['next_block', 'tiers'],
    sources: [BIP(125, 'Opt-in Full Replace-by-Fee Signaling'), CORE_28],
  },
  {
    id: 'cpfp',
    title: 'Child pays for parent (CPFP)',
    text: 'Whoever controls an output of a stuck transaction, sender or receiver, can spend it in a new child transaction with a high fee. Miners who want the child must include the parent, so they judge the pair by the package rate: the total fee divided by the total virtual size. To lift a package to a target rate, the child must pay the target times both sizes minus the parent’s fee.',
    keywords: ['cpfp', 'child', 'parent', 'package', 'bump', 'stuck', 'ancestor', 'descendant', 'speed up'],
    live: ['next_block', 'tiers'],
    sources: [DEV_GUIDE_TX, CORE_28],
  },
  {
    id: 'stuck-transaction',
    title: 'A transaction that does not confirm',
    text: 'A transaction stays unconfirmed when its rate is below what miners currently take. Compare its rate with today’s next-block floor. If you sent it, replace it with a higher fee (RBF); if you own one of its outputs, bump it with a child (CPFP); otherwise wait, as busy periods pass. If nodes drop it, because it expired or fell below their minimum, its inputs become spendable again and the wallet can send a new version.',
    keywords: ['stuck', 'pending', 'unconfirmed', 'not confirming', 'slow', 'delayed', 'dropped', 'speed up'],
    live: ['next_block', 'tiers', 'mempool'],
    sources: [BIP(125, 'Opt-in Full Replace-by-Fee Signaling'), DEV_GUIDE_P2P],
  },
  {
    id: 'minimum-relay-and-dust',
    title: 'Minimum relay rate and dust',
    text: 'Nodes do not relay transactions below a minimum fee rate: 1 sat/vB for many years, lowered to 0.1 sat/vB by default in Bitcoin Core 29.1. They also refuse outputs too small to be worth spending, called dust: with the default dust rate of 3 sat/vB that is 546 sats for a P2PKH output, 294 for P2WPKH and 330 for P2WSH and P2TR.',
    keywords: ['minimum', 'relay', 'minrelaytxfee', 'dust', 'small', 'tiny', 'floor', 'zero fee', 'sub-sat'],
    live: ['tiers'],
    sources: [DEV_GUIDE_TX],
  },
  {
    id: 'sats',
    title: 'Satoshis and bitcoin',
    text: 'One bitcoin is 100,000,000 satoshis (sats), the smallest unit on chain. Fees are counted in whole sats, so a fee is the rate times the virtual size, rounded up to a whole sat.',
    keywords: ['sat', 'sats', 'satoshi', 'satoshis', 'unit', 'btc', 'convert', 'denomination'],
    live: [],
    sources: [WHITEPAPER],
  },
  {
    id: 'address-types',
    title: 'Script and address types and what they cost',
    text: 'Legacy P2PKH addresses start with 1, P2SH with 3, native SegWit P2WPKH and P2WSH with bc1q, and Taproot P2TR with bc1p. Spending costs differ: a P2PKH input is about 148 vB, a P2WPKH input about 68 vB and a P2TR key-path input about 58 vB; outputs cost 34, 31 and 43 vB. A one-input, two-output P2WPKH payment is about 141 vB.',
    keywords: ['address', 'addresses', 'p2pkh', 'p2sh', 'p2wpkh', 'p2wsh', 'p2tr', 'bech32', 'legacy', 'native segwit', 'script type'],
    live: [],
    sources: [BIP(141, 'Segregated Witness'), BIP(350, 'Bech32m format for v1+ witness addresses'), BIP(341, 'Taproot')],
  },
  {
    id: 'taproot',
    title: 'Taproot',
    text: 'Taproot (BIPs 340 to 342) activated in November 2021. A Taproot output commits to one public key and, optionally, a tree of scripts. Spending by the key needs a single 64-byte Schnorr signature, and unused scripts are never revealed, so multisig and contracts can look like ordinary single-key payments and cost less.',
    keywords: ['taproot', 'schnorr', 'p2tr', 'tapscript', 'bc1p', 'bip340', 'bip341'],
    live: [],
    sources: [BIP(340, 'Schnorr Signatures'), BIP(341, 'Taproot'), BIP(342, 'Tapscript')],
  },
  {
    id: 'op-return',
    title: 'OP_RETURN outputs',
    text: 'An output whose script starts with OP_RETURN can never be spent, so nodes leave it out of the set of unspent coins. It is how data is attached to a transaction, usually with zero value. Its bytes are paid for like any other: a transaction with an OP_RETURN output is larger and needs a larger fee for the same rate. How much data nodes relay in such outputs is a matter of each node version’s policy.',
    keywords: ['op_return', 'opreturn', 'data', 'unspendable', 'embed', 'message', 'null data'],
    live: [],
    sources: [DEV_GUIDE_TX],
  },
  {
    id: 'anchors',
    title: 'Anchor outputs and pay-to-anchor (P2A)',
    text: 'An anchor is a small output added so that a transaction can be fee-bumped later by CPFP. Lightning commitment transactions carry two 330-sat anchors, one per party. Pay-to-anchor (P2A), the script OP_1 followed by the two bytes 4e73, needs no key at all so anyone can bump; it became standard in Bitcoin Core 28.0, together with version 3 (TRUC) transactions that limit a package to one parent and one small child.',
    keywords: ['anchor', 'anchors', 'p2a', 'pay to anchor', 'truc', 'v3', 'ephemeral', 'lightning', 'commitment'],
    live: [],
    sources: [CORE_28, BIP(431, 'Topology Restrictions for Pinning')],
  },
  {
    id: 'truc',
    title: 'Version 3 (TRUC) transactions and package relay',
    text: 'A version 3 transaction opts into topology restrictions until confirmed (BIP 431): at most one unconfirmed parent and one child, the child no larger than 1,000 vB, and it is always replaceable. These rules stop pinning attacks and, with one-parent-one-child package relay in Bitcoin Core 28.0, let a low-fee parent enter the mempool together with the child that pays for it.',
    keywords: ['truc', 'v3', 'version 3', 'package relay', 'pinning', 'bip431', 'package'],
    live: [],
    sources: [BIP(431, 'Topology Restrictions for Pinning'), CORE_28],
  },
  {
    id: 'utxo',
    title: 'Coins are unspent outputs (UTXOs)',
    text: 'Bitcoin has no account balances on chain. A wallet owns unspent transaction outputs, and a transaction spends some of them whole and creates new ones. The fee depends on the number and type of inputs and outputs, not on the amount sent: moving 1 BTC from one input can cost less than moving 0.01 BTC from twenty small ones.',
    keywords: ['utxo', 'utxos', 'output', 'outputs', 'input', 'inputs', 'balance', 'coin', 'coins', 'amount'],
    live: ['tiers'],
    sources: [DEV_GUIDE_TX],
  },
  {
    id: 'consolidation',
    title: 'Consolidating coins',
    text: 'A wallet holding many small coins pays for each of them when it spends them. Consolidating means sending them to yourself in one transaction while fees are low, so later payments need fewer inputs when fees may be higher. It is not urgent, so it suits the economy or minimum rate. The cost is privacy: it shows that all those coins belong to one owner.',
    keywords: ['consolidation', 'consolidate', 'merge', 'small coins', 'utxo management', 'sweep', 'dust'],
    live: ['tiers', 'mempool'],
    sources: [DEV_GUIDE_TX],
  },
  {
    id: 'batching',
    title: 'Batching payments',
    text: 'Paying many recipients in one transaction shares the fixed overhead and the inputs among them: ten payments in one transaction cost far fewer vbytes than ten separate transactions. Exchanges and payroll services batch withdrawals for that reason. A transaction with many outputs and few inputs usually is such a batch.',
    keywords: ['batch', 'batching', 'many outputs', 'payout', 'withdrawal', 'exchange', 'payroll'],
    live: [],
    sources: [DEV_GUIDE_TX],
  },
  {
    id: 'coinjoin',
    title: 'Coinjoin',
    text: 'A coinjoin is one transaction built by several people together, each adding inputs and receiving outputs of one common value, so an observer cannot tell whose input paid which output. Many inputs and several outputs of exactly the same amount are its usual mark, which is why explainers label that pattern as coinjoin-like: a guess, not a certainty.',
    keywords: ['coinjoin', 'privacy', 'mixing', 'equal outputs', 'whirlpool', 'joinmarket', 'anonymity'],
    live: [],
    sources: [DEV_GUIDE_TX],
  },
  {
    id: 'change',
    title: 'Change outputs',
    text: 'Inputs are spent whole, so when they hold more than the payment the wallet pays the rest back to itself in a change output. Which output is change cannot be known from the chain alone; analysts guess from clues such as a round payment amount, the change having the same script type as the inputs, or an output paying back to an input’s address. Each clue can be wrong.',
    keywords: ['change', 'change output', 'remainder', 'leftover', 'round amount', 'heuristic'],
    live: [],
    sources: [DEV_GUIDE_TX],
  },
  {
    id: 'why-fees-high',
    title: 'Why fees rise and fall',
    text: 'Block space is fixed at about one megavbyte every ten minutes while demand for it varies. When more transactions arrive than blocks can take, the mempool grows and the rate needed for the next block rises; exchange activity, market swings and bursts of data-carrying transactions all cause spikes. When demand falls, the backlog is mined down and cheap transactions confirm again, often at weekends.',
    keywords: ['high', 'expensive', 'spike', 'why', 'rising', 'rise', 'fall', 'demand', 'congestion', 'busy', 'low', 'cheap'],
    live: ['tiers', 'mempool', 'next_block'],
    sources: [DEV_GUIDE_CHAIN, MEMPOOL_API],
  },
  {
    id: 'when-to-send',
    title: 'Choosing when to send',
    text: 'If a payment is not urgent, a lower rate that targets six blocks or a day usually costs much less than paying for the next block, and the saving is largest when the gap between the fastest and economy rates is wide. If the gap is small, waiting saves little. Fees can rise while you wait, so deadlines deserve the faster rate; a transaction that signals RBF can start low and be bumped.',
    keywords: ['when', 'send', 'wait', 'timing', 'cheapest', 'save', 'saving', 'now', 'later', 'should i'],
    live: ['tiers', 'mempool'],
    sources: [MEMPOOL_API, BIP(125, 'Opt-in Full Replace-by-Fee Signaling')],
  },
  {
    id: 'mining-pools',
    title: 'Mining pools and block templates',
    text: 'Most blocks are found by pools that split the reward among many miners. The pool chooses the transactions, normally the highest-paying ones from its own mempool, so blocks can differ from a prediction: a pool may not have seen a transaction yet, or may include one paid for out of band through an accelerator service.',
    keywords: ['pool', 'pools', 'miner', 'miners', 'mining', 'hashrate', 'template', 'foundry', 'antpool', 'accelerator'],
    live: ['tip'],
    sources: [DEV_GUIDE_CHAIN],
  },
  {
    id: 'locktime',
    title: 'Locktime and sequence',
    text: 'A transaction’s locktime can forbid mining it before a given height or time, and an input’s sequence can require its coin to be a number of blocks old (BIP 68). The sequence field also carries the BIP 125 replace-by-fee signal. Wallets often set the locktime to the current height to discourage miners from reordering history.',
    keywords: ['locktime', 'nlocktime', 'sequence', 'timelock', 'relative', 'bip68', 'csv', 'cltv'],
    live: ['tip'],
    sources: [BIP(68, 'Relative lock-time using consensus-enforced sequence numbers'), BIP(125, 'Opt-in Full Replace-by-Fee Signaling')],
  },
  {
    id: 'lightning',
    title: 'Lightning and on-chain fees',
    text: 'Lightning payments move off chain and pay small routing fees, but opening and closing a channel are on-chain transactions that pay ordinary fee rates. A force-close may have to confirm quickly to claim funds in time, which is why channels carry anchor outputs that let the closing party raise the fee when the close happens.',
    keywords: ['lightning', 'channel', 'force close', 'htlc', 'layer 2', 'off chain', 'routing'],
    live: ['tiers'],
    sources: [CORE_28],
  },
  {
    id: 'estimator-accuracy',
    title: 'How accurate fee estimates are',
    text: 'This service’s observatory records every estimate each source gives and judges it on the blocks that follow: a hit when the quoted rate reached the 10th-percentile rate of at least one block within the target, an overpayment when it was above that block’s 75th percentile. A source that always quotes a huge rate hits every time but ranks badly, because ranking counts overpayment as well as misses.',
    keywords: ['accuracy', 'accurate', 'reliable', 'trust', 'observatory', 'scoreboard', 'hit rate', 'overpay', 'which estimator', 'best source'],
    live: ['tiers'],
    sources: [MEMPOOL_API, CORE_RPC],
  },
];
