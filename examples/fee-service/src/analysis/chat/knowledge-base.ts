/**
 * The chat resource's knowledge base: short entries written for this project in its own words.
 * Each states facts that can be checked in the public sources it cites. `live` names the live
 * figures worth adding when the entry answers a question (see {@link LiveFigureGroup}).
 */

import { FEES_AND_BLOCKS } from './knowledge/fees-and-blocks';
import { MARKET } from './knowledge/market';
import { TRANSACTIONS } from './knowledge/transactions';
import type { KnowledgeEntry } from './knowledge/types';

export type { KnowledgeEntry, LiveFigureGroup } from './knowledge/types';

/** Every entry, in the order retrieval has always seen them. */
export const KNOWLEDGE_BASE: readonly KnowledgeEntry[] = [...FEES_AND_BLOCKS, ...TRANSACTIONS, ...MARKET];
