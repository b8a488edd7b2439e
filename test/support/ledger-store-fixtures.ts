// The ledger store suite's fixtures: unique payment identities, a claimed entry, stored responses.
import { randomBytes } from 'node:crypto';
import type { LedgerEntry, StoredResponse } from '@tollbooth/core';

export const HOUR = 3_600_000;
let sequence = 0;

/** A fresh, unique payment identity. */
export function newId(label = 'id'): string {
  sequence += 1;
  return `eip155:84532:0x036cbd53842c5426634e7929541ec2318f3dcf7e:0xpayer:${label}-${sequence}-${randomBytes(4).toString('hex')}`;
}

/** Builds a claimed entry; expiry is an hour ahead of the real clock so no backend expires it during a run. */
export function buildLedgerEntry(overrides: Partial<LedgerEntry> = {}): LedgerEntry {
  const now = Date.now();
  return {
    id: newId(),
    state: 'claimed',
    resource: 'https://fees.example/api/v1/fees/now',
    route: 'GET /api/v1/fees/now',
    network: 'eip155:84532',
    payer: '0x857b06519E91e3A54538791bDbb0E22373e36b66',
    payload: {
      x402Version: 2,
      payload: {
        signature:
          '0x2d6a7588d6acca505cbf0d9a4a227e0c52c6c34008c8e8986a1283259764173608a2ce6496642e377d6da8dbbf5836e9bd15092f9ecab05ded3d6293af148b571c',
        authorization: { from: '0x857b', to: '0x209693', value: '10000', validAfter: '0', nonce: '0xf374' },
      },
    },
    requirements: {
      scheme: 'exact',
      network: 'eip155:84532',
      amount: '10000',
      extra: { name: 'USDC', version: '2' },
    },
    validBefore: Math.floor(now / 1000) + 600,
    owner: 'instance-a:req-1',
    leaseUntil: now + 30_000,
    createdAt: now,
    updatedAt: now,
    expiresAt: now + HOUR,
    ...overrides,
  };
}

export const ALL_BYTES = Uint8Array.from({ length: 256 }, (_, i) => i);
// Lone continuation byte, overlong encoding, truncated sequence, a surrogate half and a NUL: not UTF-8.
export const NOT_UTF8 = Uint8Array.from([0x80, 0xc0, 0xaf, 0xe2, 0x82, 0xed, 0xa0, 0x80, 0x00, 0xff, 0xfe]);

/** A stored response with `body`, its headers including an empty one. */
export function response(body: Uint8Array, status = 200): StoredResponse {
  return {
    status,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'payment-response': 'eyJzdWNjZXNzIjp0cnVlfQ==',
      'x-empty': '',
    },
    body,
  };
}
