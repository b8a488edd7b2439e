/**
 * What it costs to raise a stuck transaction to a target rate, both ways. Replace-by-fee (BIP 125
 * rules 3 and 4): the replacement pays at least the target rate on its own size, and at least the
 * old fee plus its own size at the incremental relay rate. Child-pays-for-parent: miners judge the
 * pair by its package rate, so the child pays the target rate on both sizes, minus what the parent
 * already pays, and at least the relay minimum on its own size.
 */
import { ceil, type Decimal, times } from './decimal';

/**
 * Incremental relay rate assumed for a replacement, sat/vB: Bitcoin Core's default before 29.1
 * (29.1 lowered it to 0.1). Using the older, higher value keeps a replacement relayable by both.
 */
export const INCREMENTAL_RELAY_SAT_VB = 1;

export interface StuckTransaction {
  vsize: number;
  fee_sat: bigint;
}

export interface BumpCosts {
  target: Decimal;
  rbf: {
    /** Fee of the replacement, same size as the original. */
    new_fee_sat: bigint;
    /** What the replacement pays beyond the original. */
    extra_sat: bigint;
    /** Which rule set the fee: the target rate, or the old fee plus the incremental relay rate. */
    bound_by: 'target_rate' | 'incremental_relay';
  };
  cpfp: {
    child_vsize: number;
    child_fee_sat: bigint;
    /** Parent and child together, sat/vB to three decimals. */
    package_rate_sat_vb: number;
    bound_by: 'target_rate' | 'relay_minimum';
  };
  /** Which costs fewer sats (`equal` when the same). */
  cheaper: 'rbf' | 'cpfp' | 'equal';
}

/** The larger of two bigints (Math.max takes numbers only). */
const maxOf = (a: bigint, b: bigint) => (a >= b ? a : b);
const rate3 = (fee: bigint, vsize: number) =>
  Number((fee * 2000n + BigInt(vsize)) / (2n * BigInt(vsize))) / 1000;

/** The cost of lifting `stuck` to `target` by a replacement and by a child of `childVsize`. */
export function bumpCosts(options: {
  stuck: StuckTransaction;
  target: Decimal;
  childVsize: number;
  relayMinimum: Decimal;
}): BumpCosts {
  const { stuck, target, childVsize, relayMinimum } = options;
  const byTarget = ceil(times(target, stuck.vsize));
  const byIncrement = stuck.fee_sat + BigInt(Math.ceil(INCREMENTAL_RELAY_SAT_VB * stuck.vsize));
  const newFee = maxOf(byTarget, byIncrement);
  const packageFee = ceil(times(target, stuck.vsize + childVsize));
  const byPackage = packageFee - stuck.fee_sat;
  const ownMinimum = ceil(times(relayMinimum, childVsize));
  const childFee = maxOf(byPackage, ownMinimum);
  const rbfExtra = newFee - stuck.fee_sat;
  return {
    target,
    rbf: {
      new_fee_sat: newFee,
      extra_sat: rbfExtra,
      bound_by: byTarget >= byIncrement ? 'target_rate' : 'incremental_relay',
    },
    cpfp: {
      child_vsize: childVsize,
      child_fee_sat: childFee,
      package_rate_sat_vb: rate3(stuck.fee_sat + childFee, stuck.vsize + childVsize),
      bound_by: byPackage >= ownMinimum ? 'target_rate' : 'relay_minimum',
    },
    cheaper: rbfExtra < childFee ? 'rbf' : rbfExtra > childFee ? 'cpfp' : 'equal',
  };
}

/** The fee a transaction of `vsize` pays at `rate`, rounded up to whole sats. */
export const feeAt = (rate: Decimal, vsize: number): bigint => ceil(times(rate, vsize));
