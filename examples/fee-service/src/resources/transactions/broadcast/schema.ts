import * as z from 'zod';

const count = (description: string) => z.number().int().min(0).describe(description);

export const BroadcastRequestSchema = z.strictObject({
  hex: z
    .string()
    .regex(/^[0-9a-fA-F]*$/, 'must be hex characters only')
    .describe('Signed raw transaction hex')
    .meta({ examples: ['0200000001'] }),
  allow_high_fee: z
    .boolean()
    .optional()
    .describe('Broadcast even when the fee rate is above the absurd-fee limit'),
});

export const BroadcastResultSchema = z
  .strictObject({
    data: z
      .strictObject({
        txid: z
          .string()
          .regex(/^[0-9a-f]{64}$/)
          .describe('Transaction id.'),
        wtxid: z
          .string()
          .regex(/^[0-9a-f]{64}$/)
          .describe('Witness transaction id.'),
        size: count('Bytes, witness included.'),
        weight: count('BIP 141 weight.'),
        vsize: count('Virtual size: ceil(weight / 4), vB.'),
        fee_sat: count('Inputs minus outputs, sats; null when not known.').nullable(),
        fee_rate_sat_vb: z.number().min(0).nullable().describe('fee / vsize, sat/vB; null when not known.'),
        fee_basis: z
          .enum(['testmempoolaccept', 'prevouts', 'unknown'])
          .describe("Bitcoin Core's testmempoolaccept, the prevouts read from the upstream, or not known."),
        broadcast_via: z
          .enum(['mempool.space', 'esplora', 'bitcoin-core'])
          .describe('The dialect it was sent through.'),
        next_block: z
          .strictObject({
            basis: z.enum(['mempool_projection', 'block_template', 'unknown']),
            entry_fee_rate_sat_vb: z
              .number()
              .min(0)
              .nullable()
              .describe(
                'The next block’s entry rate now: the lowest rate it would include — the relay minimum while it has room, its 10th-percentile rate (at least the relay minimum) once full (docs/fee-rules.md#would-have-been-included).',
              ),
            would_be_included_next: z
              .boolean()
              .nullable()
              .describe(
                'Whether its rate reaches that entry rate: as projected now, it would be included in the next block.',
              ),
            projected_block_index: z
              .number()
              .int()
              .min(0)
              .nullable()
              .describe('The projected block its rate falls in (0: the next); null when not known.'),
          })
          .describe('Where it would sit in the next blocks, as projected right after the broadcast.'),
      })
      .describe('The broadcast transaction.'),
    meta: z
      .strictObject({
        broadcast_at: z.iso.datetime({ offset: true }).describe('When the upstream accepted it.'),
        source: z.string().describe('Base URL of the upstream it was sent to.'),
        checks: z.array(z.string()).describe('The local checks it passed before anything was sent.'),
        max_fee_rate_sat_vb: z.number().positive().describe('The absurd-fee limit in force.'),
        allow_high_fee: z.boolean().describe('Whether the request lifted that limit.'),
      })
      .describe('How it was sent.'),
  })
  .describe('Broadcast result (POST /api/v1/broadcast).');
export type BroadcastResult = z.infer<typeof BroadcastResultSchema>;
