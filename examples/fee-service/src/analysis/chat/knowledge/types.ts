// The shape of a knowledge-base entry (knowledge-base.ts assembles the entries).

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
