import * as z from 'zod';
import { SCRIPT_KINDS } from '../../../analysis/script-types';
import { aiBodySchema, TiersSchema } from '../shared/schema';

const INPUT_KINDS = [...SCRIPT_KINDS, 'p2sh-p2wpkh', 'p2sh-p2wsh', 'coinbase'] as const;
const hex64 = z.string().regex(/^[0-9a-f]{64}$/);
const sats = z.number().int().min(0);
const rate = z.number().min(0);
const relative = z.strictObject({ txid: hex64, fee: sats, weight: sats });

export const TransactionFactsSchema = z
  .strictObject({
    transaction: z.strictObject({
      txid: hex64.describe('Transaction id, hashed from the raw bytes'),
      wtxid: hex64.describe('Witness transaction id'),
      version: z.number().int(),
      locktime: z.number().int().min(0),
      size: sats.describe('Serialized size with witness, bytes'),
      weight: sats.describe('3 × base size + total size (BIP 141)'),
      vsize: sats.describe('ceil(weight / 4), vB'),
      segwit: z.boolean(),
      coinbase: z.boolean(),
      input_count: sats,
      output_count: sats,
    }),
    inputs: z.array(
      z.strictObject({
        n: sats,
        txid: hex64.describe('Spent outpoint txid'),
        vout: sats,
        type: z.enum(INPUT_KINDS).describe('Kind of the spent output'),
        value_sat: sats.nullable().describe('Value of the spent output, null when the upstream gave none'),
        sequence: sats,
      }),
    ),
    outputs: z.array(
      z.strictObject({
        n: sats,
        type: z.enum(SCRIPT_KINDS),
        value_sat: sats,
        address: z.string().nullable().describe('Mainnet address, null for scripts without one'),
      }),
    ),
    script_types: z.strictObject({
      inputs: z.record(z.string(), sats).describe('Count of inputs per kind'),
      outputs: z.record(z.string(), sats).describe('Count of outputs per kind'),
    }),
    totals: z.strictObject({ input_sat: sats.nullable(), output_sat: sats }),
    fee: z
      .strictObject({
        fee_sat: z
          .number()
          .int()
          .describe('Inputs − outputs, from the prevouts (never the upstream’s own figure)'),
        fee_rate_sat_vb: rate.describe('fee / vsize, three decimals'),
      })
      .nullable()
      .describe('Null for a coinbase or when a prevout is unknown'),
    status: z.strictObject({
      confirmed: z.boolean(),
      block_height: sats.nullable(),
      block_hash: hex64.nullable(),
      block_time: z.iso.datetime().nullable(),
      confirmations: sats,
    }),
    rbf: z.strictObject({
      signals_bip125: z.boolean().describe('An input sequence is below 0xfffffffe'),
      signalling_inputs: z.array(sats),
      truc_v3: z.boolean().describe('Version 3 (TRUC, BIP 431): replaceable by policy'),
    }),
    market: z
      .strictObject({
        reference: z.enum(['next_block_now', 'confirming_block']).describe('What the rate is compared with'),
        next_block_floor_sat_vb: rate.describe(
          'The next block’s entry rate now: the lowest rate it would include (docs/fee-rules.md#would-have-been-included)',
        ),
        floor_source: z.enum(['projected_block', 'minimum_tier', 'fastest_tier']),
        tiers: TiersSchema,
        tier_met: z.enum(['fastest', 'half_hour', 'hour', 'economy', 'minimum', 'below_minimum']),
        would_be_included_next_block: z
          .boolean()
          .nullable()
          .describe(
            'Unconfirmed only: its rate reaches the next block’s entry rate, so as projected now it would be included',
          ),
        block_p10_sat_vb: rate.nullable().describe('Confirmed only: p10 of its block'),
        block_full: z
          .boolean()
          .nullable()
          .describe('Confirmed only: its block was full (weight ≥ 3,960,000 WU); null when not known'),
        block_entry_rate_sat_vb: rate
          .nullable()
          .describe(
            'Confirmed only: the lowest rate that would have been included in its block — the relay minimum (the minimum tier now) when it had room, max(relay minimum, p10) when full',
          ),
        overpaid_sat_vb: rate.describe(
          'Rate above the reference entry rate (the next block’s, or its block’s)',
        ),
        overpaid_sat: sats.describe('Sats paid above a fee at that entry rate for this vsize (rounded up)'),
      })
      .nullable(),
    cpfp: z
      .strictObject({
        ancestors: z.array(relative),
        descendants: z.array(relative),
        package_fee_sat: sats,
        package_vsize: sats,
        package_fee_rate_sat_vb: rate,
      })
      .nullable()
      .describe('Unconfirmed relatives in the mempool, null when there are none'),
    consistency: z.strictObject({
      upstream_fee_sat: z.number().int().nullable(),
      upstream_weight: sats.nullable(),
      agrees: z.boolean().describe('Whether the upstream’s own fee and weight match the ones measured here'),
    }),
    heuristics: z
      .array(
        z.strictObject({
          label: z.enum(['consolidation', 'batch_payout', 'coinjoin_like', 'likely_change']),
          confidence: z.number().min(0).max(1),
          rule: z.string().describe('The rule that fired'),
          output: sats.optional().describe('The output pointed at (likely_change)'),
        }),
      )
      .describe('Labelled guesses, not facts'),
  })
  .describe('Checkable facts of the transaction');

export const ExplainTransactionBodySchema = aiBodySchema(TransactionFactsSchema, 'Transaction explanation');
