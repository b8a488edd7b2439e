import { analyst } from './ai/analyst/resource';
import { chat } from './ai/chat/resource';
import { explainBlock } from './ai/explain-block/resource';
import { explainTransaction } from './ai/explain-transaction/resource';
import { feeAdvice } from './ai/fee-advice/resource';
import { feeLandscape } from './fees/landscape/resource';
import { feeDecision } from './fees/now/resource';
import { observatoryBlockStats } from './fees/observatory/block-stats/resource';
import { observatoryEstimates } from './fees/observatory/estimates/resource';
import { observatoryScoreboard } from './fees/observatory/scoreboard/resource';
import { feePreview } from './fees/preview/resource';
import type { AnyResource } from './kit';
import { nextBlock } from './mining/nextblock/resource';
import type { PricePattern } from './publish';
import { CATALOG_MAX_TIMEOUT_SECONDS } from './shared/planned';
import { broadcast } from './transactions/broadcast/resource';
import { x402Demo } from './x402/demo/resource';

/**
 * Every resource of the fee service, in the order the catalog, OpenAPI and `/.well-known/x402`
 * list them: the free preview, the paid decision, the ten catalog resources
 * (docs/fee-service-contract.md#other-paid-resources), the analyst (sold under its price pattern,
 * not listed in the catalog), then the free demo. Adding a resource is a
 * folder under `src/resources/` and one line here (`src/resources/README.md`).
 */
export const RESOURCES: readonly AnyResource[] = [
  feePreview,
  feeDecision,
  explainTransaction,
  explainBlock,
  feeAdvice,
  chat,
  broadcast,
  nextBlock,
  observatoryScoreboard,
  observatoryBlockStats,
  observatoryEstimates,
  feeLandscape,
  analyst,
  x402Demo,
];

/**
 * What any other path under a prefix costs (docs/fee-service-contract.md#price-patterns). A
 * pattern is challenged only while a built resource under it is active.
 */
export const PRICE_PATTERNS: readonly PricePattern[] = [
  {
    path: '/api/v1/ai/*',
    amount: '10000',
    maxTimeoutSeconds: CATALOG_MAX_TIMEOUT_SECONDS,
    description: 'AI explainers and advice',
  },
  {
    path: '/api/v1/fees/observatory/*',
    amount: '5000',
    maxTimeoutSeconds: CATALOG_MAX_TIMEOUT_SECONDS,
    description: 'Fee observatory analytics',
  },
  {
    path: '/api/v1/analyst*',
    amount: '50000',
    maxTimeoutSeconds: CATALOG_MAX_TIMEOUT_SECONDS,
    description: 'Multi-step AI analyst',
  },
];
