import * as z from 'zod';
import { ALGORITHM_VERSION } from '../../domain/constants';
import type { SnapshotReading } from '../../domain/types';
import type { ResourceEnvironment } from '../kit';

/**
 * The `meta` the free preview and the paid decision share (docs/fee-service-contract.md#feepreview):
 * the snapshot's provenance and freshness, with the deployment's constant labels pinned as literals
 * in the published schema.
 */

/** Per-deployment constants; omitted ones are plain strings in the schema. */
export interface FeeSchemaConstants {
  /** Snapshot format label, ending in `-v1`. */
  snapshotSchema?: string;
  /** Upstream base URL. */
  source?: string;
  /** Name of the payment facilitator. */
  facilitator?: string;
}

/** The deployment's constants: its primary upstream's labels and its facilitator's name, when it has them. */
export function feeSchemaConstantsOf(env: ResourceEnvironment): FeeSchemaConstants {
  const { bitcoin, payments } = env.capabilities;
  const primary = bitcoin?.[bitcoin.primary];
  return {
    ...(primary ? { snapshotSchema: primary.snapshotSchema, source: primary.source } : {}),
    ...(payments ? { facilitator: payments.facilitatorName } : {}),
  };
}

/** A literal of the deployment's value when given, else the fallback schema. */
export function constantString(value: string | undefined, fallback: z.ZodString, description: string) {
  return (value === undefined ? fallback : z.literal(value)).describe(description);
}

/** The fields of the shared `meta`, as a zod shape. */
export function snapshotMetaShape(constants: FeeSchemaConstants) {
  return {
    snapshot_schema: constantString(
      constants.snapshotSchema,
      z.string().regex(/-v1$/),
      'Fixed label of the upstream mempool snapshot format, ending in -v1.',
    ),
    snapshot_digest: z
      .string()
      .regex(/^sha256:[0-9a-f]{64}$/)
      .describe('sha256: + hex SHA-256 of the canonical JSON (sorted keys, no whitespace) of the snapshot.'),
    source: constantString(
      constants.source,
      z.string().min(1),
      'Fixed address of the upstream mempool data provider.',
    ),
    fetched_at: z.iso.datetime({ offset: true }).describe('Time the upstream answered (ISO 8601).'),
    age_seconds: z.number().min(0).describe('Age of the snapshot at response time, seconds.'),
    stale: z
      .boolean()
      .describe('True when the snapshot is older than 30 s or a newer block was seen; check before use.'),
    algorithm_version: z.literal(ALGORITHM_VERSION).describe('Decision algorithm label.'),
  };
}

/** The shared `meta` of a snapshot reading. */
export function buildSnapshotMeta(reading: SnapshotReading) {
  const { snapshot } = reading;
  return {
    snapshot_schema: snapshot.snapshot_schema,
    snapshot_digest: snapshot.snapshot_digest,
    source: snapshot.source,
    fetched_at: snapshot.fetched_at,
    age_seconds: reading.age_seconds,
    stale: reading.stale,
    algorithm_version: ALGORITHM_VERSION,
  } as const;
}
