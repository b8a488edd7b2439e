import { hashDomain, parseEventLogs } from 'viem';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { linkBytecode } from './circle-token';
import { CANONICAL_USDC } from './constants';
import type { Devnet } from './devnet';
import { startDevnet } from './start-devnet';
import { buildAuthorization, bytesArgs, signAuthorization, vrsArgs } from './test-helpers';

// Real anvil processes: allow for a busy 2-core machine running every suite at once.
vi.setConfig({ testTimeout: 20_000, hookTimeout: 30_000 });

let devnet: Devnet;

beforeAll(async () => {
  devnet = await startDevnet({ chainId: 8453, token: 'circle', payers: 2 });
});

afterAll(async () => {
  await devnet?.stop();
});

async function revertReason(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  throw new Error('expected a revert, but the call succeeded');
}

describe("Circle's FiatTokenV2_2 on the devnet", () => {
  it('runs at the canonical Base USDC address with the USD Coin / 2 domain and funded payers', async () => {
    const { publicClient, token } = devnet;
    expect(token.kind).toBe('circle');
    expect(token.address).toBe(CANONICAL_USDC[8453]!.address);
    const read = (functionName: 'name' | 'symbol' | 'version' | 'decimals' | 'DOMAIN_SEPARATOR') =>
      publicClient.readContract({ address: token.address, abi: token.abi, functionName });
    expect(await read('name')).toBe('USD Coin');
    expect(await read('symbol')).toBe('USDC');
    expect(await read('version')).toBe('2');
    expect(await read('decimals')).toBe(6);
    expect(await read('DOMAIN_SEPARATOR')).toBe(
      hashDomain({
        domain: { name: 'USD Coin', version: '2', chainId: 8453n, verifyingContract: token.address },
        types: {
          EIP712Domain: [
            { name: 'name', type: 'string' },
            { name: 'version', type: 'string' },
            { name: 'chainId', type: 'uint256' },
            { name: 'verifyingContract', type: 'address' },
          ],
        },
      }),
    );
    for (const payer of devnet.accounts.payers)
      expect(await devnet.balanceOf(payer.address)).toBe(1_000_000_000n);
  });

  it.each(['v, r, s', 'bytes signature'] as const)(
    'settles a signed transferWithAuthorization through the %s overload, once',
    async (form) => {
      const { token, accounts } = devnet;
      const from = accounts.payers[form === 'v, r, s' ? 0 : 1]!;
      const auth = await buildAuthorization(devnet, { from: from.address, value: 2_500n });
      const sig = await signAuthorization(devnet, from.privateKey, auth);
      const before = await devnet.balanceOf(auth.to);
      const facilitator = devnet.clientFor(accounts.facilitator.privateKey);
      const send = () =>
        form === 'v, r, s'
          ? facilitator.writeContract({
              address: token.address,
              abi: token.abi,
              functionName: 'transferWithAuthorization',
              args: vrsArgs(auth, sig),
            })
          : facilitator.writeContract({
              address: token.address,
              abi: token.abi,
              functionName: 'transferWithAuthorization',
              args: bytesArgs(auth, sig.signature),
            });
      const receipt = await devnet.publicClient.waitForTransactionReceipt({ hash: await send() });
      expect(receipt.status).toBe('success');
      expect(await devnet.balanceOf(auth.to)).toBe(before + 2_500n);
      const events = parseEventLogs({ abi: token.abi, logs: receipt.logs });
      expect(events.map((e) => e.eventName)).toEqual(['AuthorizationUsed', 'Transfer']);
      expect(await revertReason(send())).toContain('FiatTokenV2: authorization is used or canceled');
    },
  );

  it('reverts an expired authorization with the same message as TollboothUSD', async () => {
    const from = devnet.accounts.payers[0]!;
    const now = await devnet.latestTimestamp();
    const auth = await buildAuthorization(devnet, { from: from.address, validBefore: now - 5n });
    const sig = await signAuthorization(devnet, from.privateKey, auth);
    const message = await revertReason(
      devnet.clientFor(devnet.accounts.facilitator.privateKey).writeContract({
        address: devnet.token.address,
        abi: devnet.token.abi,
        functionName: 'transferWithAuthorization',
        args: vrsArgs(auth, sig),
      }),
    );
    expect(message).toContain('FiatTokenV2: authorization is expired');
  });
});

describe('linkBytecode', () => {
  it('writes the library address at every link reference and nowhere else', () => {
    const placeholder = `__$${'ab'.repeat(17)}$__`;
    const code =
      `0x6000${Buffer.from(placeholder).toString('hex').slice(0, 40)}60016000${Buffer.from(placeholder).toString('hex').slice(0, 40)}00` as const;
    const linked = linkBytecode(
      code,
      {
        'contracts/util/SignatureChecker.sol': {
          SignatureChecker: [
            { start: 2, length: 20 },
            { start: 26, length: 20 },
          ],
        },
      },
      { SignatureChecker: '0x00000000000000000000000000000000DeaDBeef' },
    );
    expect(linked).toBe(`0x6000${'0'.repeat(32)}deadbeef60016000${'0'.repeat(32)}deadbeef00`);
  });
});
