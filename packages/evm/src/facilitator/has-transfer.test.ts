import { encodeAbiParameters, encodeEventTopics, type Hex, type Log, parseAbiItem } from 'viem';
import { describe, expect, it } from 'vitest';
import { hasTransfer } from './settle-exact-evm-payment';

const token = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const from = '0x1111111111111111111111111111111111111111';
const to = '0x2222222222222222222222222222222222222222';
const transfer = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

function log(over: {
  address?: string;
  from?: string;
  to?: string;
  value?: bigint;
  topics?: Hex[];
  data?: Hex;
}): Log {
  return {
    address: (over.address ?? token) as Hex,
    topics: (over.topics ??
      encodeEventTopics({
        abi: [transfer],
        eventName: 'Transfer',
        args: { from: (over.from ?? from) as Hex, to: (over.to ?? to) as Hex },
      })) as [Hex, ...Hex[]],
    data: over.data ?? encodeAbiParameters([{ type: 'uint256' }], [over.value ?? 1000n]),
  } as Log;
}
const standard = log({}).topics as Hex[];

describe('hasTransfer (the Transfer log by its raw topics)', () => {
  it.each<[string, Log[], boolean]>([
    ['the exact transfer', [log({})], true],
    ['addresses in another case', [log({ address: token.toLowerCase() })], true],
    ['among other logs', [log({ value: 1n }), log({})], true],
    ['no log', [], false],
    ['another token', [log({ address: to })], false],
    ['another payer', [log({ from: to })], false],
    ['another recipient', [log({ to: from })], false],
    ['another amount', [log({ value: 999n })], false],
    ['another event', [log({ topics: [`0x${'ab'.repeat(32)}`, ...standard.slice(1)] })], false],
    [
      'a Transfer with the value indexed too',
      [log({ topics: [...standard, `0x${'00'.repeat(31)}01`] })],
      false,
    ],
    ['data longer than one word', [log({ data: `0x${'00'.repeat(30)}03e8${'00'.repeat(32)}` })], false],
  ])('%s', (_what, logs, expected) => {
    expect(hasTransfer({ logs }, token, from, to, 1000n)).toBe(expected);
  });
});
