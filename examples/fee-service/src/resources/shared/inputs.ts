import * as z from 'zod';

/** Shared input schemas: one definition of what a txid or a block reference looks like. */

/** A transaction id: 64 hex characters (either case; answers use lower case). */
export const TxidSchema = z
  .string()
  .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex characters')
  .describe('Transaction id (64 hex characters)')
  .meta({ examples: ['4a5e1e4baab89f3a32518a88c31bc87f618f76673e2cc77ab2127b7afdeda33b'] });

/** A block hash (64 hex) or a height (a whole number). */
export const BlockRefSchema = z
  .string()
  .regex(/^(?:[0-9a-fA-F]{64}|[0-9]{1,9})$/, 'must be a 64-hex block hash or a height')
  .describe('Block hash (64 hex characters) or height')
  .meta({ examples: ['000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f', '840000'] });
