import type { BitcoinUpstreams } from '../../capabilities/bitcoin';
import { btcPerKvbToSatPerVb, roundRate3 } from '../../domain/fee-math';
import { type FeeTiers, TIER_NAMES } from '../../domain/types';
import { MAX_RATE_SAT_VB, repairTierOrder } from '../../snapshot/validate';
import { rateForTarget, repairEstimates } from '../../upstreams/esplora';

/**
 * Every configured estimator's quote, read through its own dialect and named as the observatory
 * names it (its scoreboard judges the same sources): mempool.space's precise tiers, Esplora's
 * targets, Core's `estimatesmartfee` in both modes. A source that fails or answers nonsense is
 * listed as unavailable with the reason; nothing is filled in for it.
 */

/** Confirmation target (blocks) of each tier; `minimum` is a floor, not a target. */
export const TIER_TARGETS = { fastest: 1, half_hour: 3, hour: 6, economy: 144 } as const;
/** Targets asked of Esplora and Core. */
export const QUOTED_TARGETS = [1, 2, 3, 6, 12, 24, 144, 504, 1008] as const;

export type SourceQuote =
  | {
      source: string;
      status: 'ok';
      tiers: FeeTiers;
      /**
       * Target (blocks) → rate, sat/vB, in target order and never rising with the target: a quote
       * above a shorter target's is lowered to it (a running minimum from the shortest target).
       */
      targets: Record<string, number>;
      /** True when a quote (a target, or a tier against the next) was lowered by that repair. */
      repaired: boolean;
      /** Target → the rate as quoted, for each target the repair lowered; empty when none was. */
      lowered_targets: Record<string, number>;
    }
  | { source: string; status: 'unavailable'; reason: string };

const plausible = (rate: number | undefined): rate is number =>
  typeof rate === 'number' && Number.isFinite(rate) && rate >= 0 && rate <= MAX_RATE_SAT_VB;

/**
 * Quotes by target, repaired: in target order, each at most the shorter targets' (Esplora and Core
 * can quote a longer target above a shorter one — docs/fee-rules.md#snapshot-validation).
 */
function repairTargets(quoted: Map<number, number>) {
  const { estimates, repaired } = repairEstimates(quoted);
  const lowered: Record<string, number> = {};
  for (const [target, rate] of estimates) {
    const asQuoted = roundRate3(quoted.get(target)!);
    if (asQuoted > rate) lowered[String(target)] = asQuoted;
  }
  return { estimates, repaired, lowered };
}

function tiersFromTargets(targets: Map<number, number>, minimum: number) {
  const pick = (target: number) => rateForTarget(targets, target);
  const raw = {
    fastest: pick(TIER_TARGETS.fastest),
    half_hour: pick(TIER_TARGETS.half_hour),
    hour: pick(TIER_TARGETS.hour),
    economy: pick(TIER_TARGETS.economy),
    minimum,
  };
  if (!TIER_NAMES.every((name) => plausible(raw[name]))) throw new Error('no plausible rate for every tier');
  return repairTierOrder(raw as FeeTiers);
}

async function quote(
  source: string,
  read: () => Promise<Omit<Extract<SourceQuote, { status: 'ok' }>, 'source' | 'status'>>,
) {
  try {
    return { source, status: 'ok' as const, ...(await read()) };
  } catch (error) {
    return {
      source,
      status: 'unavailable' as const,
      reason: error instanceof Error ? error.message : String(error),
    };
  }
}

/** Quotes of every configured source, in the order mempool.space, Esplora, Core economical, Core conservative. */
export async function fetchSourceQuotes(upstreams: BitcoinUpstreams): Promise<SourceQuote[]> {
  const jobs: Array<Promise<SourceQuote>> = [];
  const { mempool, esplora, core } = upstreams;
  if (mempool) {
    jobs.push(
      quote('mempool.space', async () => {
        const fees = await mempool.fetchPreciseFees();
        const tiers = {
          fastest: fees.fastestFee,
          half_hour: fees.halfHourFee,
          hour: fees.hourFee,
          economy: fees.economyFee,
          minimum: fees.minimumFee,
        };
        if (!TIER_NAMES.every((name) => plausible(tiers[name]))) throw new Error('implausible tiers');
        const ordered = repairTierOrder(tiers);
        const targets = Object.fromEntries(
          Object.entries(TIER_TARGETS).map(([tier, target]) => [
            String(target),
            ordered.tiers[tier as keyof typeof TIER_TARGETS],
          ]),
        );
        const lowered = Object.fromEntries(
          Object.entries(TIER_TARGETS)
            .filter(
              ([tier]) =>
                tiers[tier as keyof typeof TIER_TARGETS] > ordered.tiers[tier as keyof typeof TIER_TARGETS],
            )
            .map(([tier, target]) => [String(target), tiers[tier as keyof typeof TIER_TARGETS]]),
        );
        return { tiers: ordered.tiers, targets, repaired: ordered.repaired, lowered_targets: lowered };
      }),
    );
  }
  if (esplora) {
    jobs.push(
      quote('esplora', async () => {
        const { raw } = await esplora.fetchFeeEstimates();
        const fixed = repairTargets(new Map([...raw].filter(([, rate]) => plausible(rate))));
        const longest = Math.max(...fixed.estimates.keys());
        const { tiers, repaired } = tiersFromTargets(fixed.estimates, fixed.estimates.get(longest)!);
        const shown = QUOTED_TARGETS.filter((t) => fixed.estimates.has(t));
        return {
          tiers,
          targets: Object.fromEntries(shown.map((t) => [String(t), fixed.estimates.get(t)!])),
          repaired: repaired || fixed.repaired,
          lowered_targets: fixed.lowered,
        };
      }),
    );
  }
  if (core) {
    const minimum = core
      .getMempoolInfo()
      .then((info) =>
        Math.max(btcPerKvbToSatPerVb(info.mempoolminfee), btcPerKvbToSatPerVb(info.minrelaytxfee)),
      );
    minimum.catch(() => {});
    for (const mode of ['economical', 'conservative'] as const) {
      jobs.push(
        quote(`core-${mode}`, async () => {
          const estimates = await Promise.all(
            QUOTED_TARGETS.map((target) => core.estimateSmartFee(target, mode)),
          );
          const quoted = new Map<number, number>();
          QUOTED_TARGETS.forEach((target, i) => {
            const rate = estimates[i]!.satPerVb;
            if (plausible(rate)) quoted.set(target, rate);
          });
          const fixed = repairTargets(quoted);
          const { tiers, repaired } = tiersFromTargets(fixed.estimates, await minimum);
          return {
            tiers,
            targets: Object.fromEntries([...fixed.estimates].map(([t, r]) => [String(t), r])),
            repaired: repaired || fixed.repaired,
            lowered_targets: fixed.lowered,
          };
        }),
      );
    }
  }
  return Promise.all(jobs);
}
