import type { Audit } from '../types';
import { availabilityAudits } from './availability';
import { challengeAudits } from './challenge';
import { corsAudits } from './cors';
import { decodingAudits } from './decoding';
import { pathAudits } from './paths';
import { rejectionAudits } from './rejections';
import { replayAudits } from './replay';
import { settlementAudits } from './settlement';

/** Every resource-server audit, in a stable order. Ids are never reused. */
export const AUDITS: readonly Audit[] = [
  ...challengeAudits,
  ...decodingAudits,
  ...rejectionAudits,
  ...settlementAudits,
  ...replayAudits,
  ...availabilityAudits,
  ...corsAudits,
  ...pathAudits,
];
