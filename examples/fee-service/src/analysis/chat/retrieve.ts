import MiniSearch from 'minisearch';
import { KNOWLEDGE_BASE, type KnowledgeEntry } from './knowledge-base';

/**
 * Words that place a question in the chat's domain (Bitcoin fees, mempool, transactions and
 * blocks). A question needs one of them, or two distinct matched terms in the knowledge base, to
 * be answered; anything else is out of the domain (422, never charged).
 */
export const DOMAIN_TERMS: ReadonlySet<string> = new Set([
  'bitcoin',
  'btc',
  'sat',
  'sats',
  'satoshi',
  'satoshis',
  'fee',
  'fees',
  'feerate',
  'mempool',
  'block',
  'blocks',
  'transaction',
  'transactions',
  'tx',
  'txs',
  'txid',
  'utxo',
  'utxos',
  'miner',
  'miners',
  'mining',
  'confirm',
  'confirmation',
  'confirmations',
  'confirmed',
  'unconfirmed',
  'rbf',
  'cpfp',
  'segwit',
  'taproot',
  'vbyte',
  'vbytes',
  'vsize',
  'vb',
  'halving',
  'subsidy',
  'lightning',
  'wallet',
  'address',
  'op_return',
  'anchor',
  'p2a',
  'p2pkh',
  'p2sh',
  'p2wpkh',
  'p2wsh',
  'p2tr',
  'bech32',
  'coinjoin',
  'consolidation',
  'consolidate',
  'batching',
  'dust',
  'locktime',
  'hashrate',
  'difficulty',
  'estimatesmartfee',
  'truc',
  'broadcast',
  'chain',
  'onchain',
]);

const STOP_WORDS = new Set([
  'a',
  'an',
  'the',
  'is',
  'are',
  'was',
  'were',
  'be',
  'do',
  'does',
  'did',
  'i',
  'my',
  'me',
  'you',
  'your',
  'it',
  'its',
  'of',
  'to',
  'in',
  'on',
  'for',
  'at',
  'by',
  'and',
  'or',
  'what',
  'whats',
  'how',
  'which',
  'who',
  'can',
  'should',
  'would',
  'will',
  'this',
  'that',
  'there',
  'with',
  'from',
  'about',
  'right',
  'today',
  'please',
  'tell',
  'explain',
]);

/** Lower-cases and drops stop words; keeps `op_return` and `sat/vb` whole. */
function processTerm(term: string): string | null {
  const lower = term.toLowerCase();
  return STOP_WORDS.has(lower) || lower.length === 0 ? null : lower;
}
const tokenize = (text: string) => text.split(/[^\p{L}\p{N}_/]+/u);

export interface Retrieved {
  entry: KnowledgeEntry;
  score: number;
  /** Knowledge-base terms the question matched. */
  matched: string[];
}

export type Retrieval =
  | { inDomain: true; results: Retrieved[]; domainTerms: string[] }
  | { inDomain: false; reason: string };

/** The knowledge base indexed once with MiniSearch (fuzzy and prefix matching, titles and keywords boosted). */
export function createKnowledgeIndex(entries: readonly KnowledgeEntry[] = KNOWLEDGE_BASE) {
  const byId = new Map(entries.map((e) => [e.id, e]));
  const index = new MiniSearch<KnowledgeEntry>({
    fields: ['title', 'text', 'keywords'],
    extractField: (doc, field) => {
      const value = doc[field as keyof KnowledgeEntry];
      return Array.isArray(value) ? value.join(' ') : String(value);
    },
    tokenize,
    processTerm,
    searchOptions: { boost: { title: 2, keywords: 3 }, fuzzy: 0.2, prefix: true, combineWith: 'OR' },
  });
  index.addAll(entries);

  return {
    /**
     * The entries that answer a question, best first (at most `limit`, each scoring at least half
     * the best), or why the question is outside the domain.
     */
    retrieve(question: string, limit = 2): Retrieval {
      const words = tokenize(question)
        .map((w) => w.toLowerCase())
        .filter(Boolean);
      const domainTerms = [
        ...new Set(words.filter((w) => DOMAIN_TERMS.has(w) || DOMAIN_TERMS.has(w.replace(/s$/, '')))),
      ];
      const hits = index.search(question);
      const best = hits[0];
      const matchedTerms = new Set(best?.queryTerms ?? []);
      if (!best || (domainTerms.length === 0 && matchedTerms.size < 2)) {
        return {
          inDomain: false,
          reason: 'the question is not about Bitcoin fees, the mempool, transactions or blocks',
        };
      }
      const results = hits
        .filter((h) => h.score >= best.score / 2)
        .slice(0, limit)
        .map((h) => ({
          entry: byId.get(String(h.id))!,
          score: Math.round(h.score * 100) / 100,
          matched: h.terms,
        }));
      return { inDomain: true, results, domainTerms };
    },
  };
}
export type KnowledgeIndex = ReturnType<typeof createKnowledgeIndex>;
