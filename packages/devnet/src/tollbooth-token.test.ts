import { encodeFunctionData, type Hex, hashDomain, parseEventLogs } from 'viem';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CANONICAL_USDC, MULTICALL3_ADDRESS } from './constants';
import type { Devnet } from './devnet';
import { multicall3Abi, testErc1271WalletAbi, testErc1271WalletBytecode } from './generated/artifacts';
import { startDevnet } from './start-devnet';
import { buildAuthorization, bytesArgs, randomNonce, signAuthorization, vrsArgs } from './test-helpers';

// Real anvil processes: allow for a busy 2-core machine running every suite at once.
vi.setConfig({ testTimeout: 20_000, hookTimeout: 30_000 });

let devnet: Devnet;

beforeAll(async () => {
  devnet = await startDevnet({ chainId: 8453 });
});

afterAll(async () => {
  await devnet?.stop();
});

const payer = (i: number) => devnet.accounts.payers[i]!;

async function revertReason(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  throw new Error('expected a revert, but the call succeeded');
}

describe('TollboothUSD on the devnet', () => {
  it('sits at the canonical Base USDC address with the USD Coin / 2 domain and 6 decimals', async () => {
    const { publicClient, token } = devnet;
    expect(token.address).toBe(CANONICAL_USDC[8453]!.address);
    const read = <T>(functionName: 'name' | 'symbol' | 'version' | 'decimals' | 'DOMAIN_SEPARATOR') =>
      publicClient.readContract({ address: token.address, abi: token.abi, functionName }) as Promise<T>;
    expect(await read('name')).toBe('USD Coin');
    expect(await read('symbol')).toBe('USDC');
    expect(await read('version')).toBe('2');
    expect(await read('decimals')).toBe(6);
    const expected = hashDomain({
      domain: { name: 'USD Coin', version: '2', chainId: 8453n, verifyingContract: token.address },
      types: {
        EIP712Domain: [
          { name: 'name', type: 'string' },
          { name: 'version', type: 'string' },
          { name: 'chainId', type: 'uint256' },
          { name: 'verifyingContract', type: 'address' },
        ],
      },
    });
    expect(await read('DOMAIN_SEPARATOR')).toBe(expected);
    const [, name, version, chainId, verifyingContract] = await publicClient.readContract({
      address: token.address,
      abi: token.abi,
      functionName: 'eip712Domain',
    });
    expect({ name, version, chainId, verifyingContract }).toEqual({
      name: 'USD Coin',
      version: '2',
      chainId: 8453n,
      verifyingContract: token.address,
    });
  });

  it('reports chain id 8453 and runs the token code at the canonical address', async () => {
    expect(await devnet.publicClient.getChainId()).toBe(8453);
    const code = await devnet.publicClient.getCode({ address: devnet.token.address });
    expect(code?.length).toBeGreaterThan(1_000);
  });

  it('refuses a second initialize at the canonical address', async () => {
    const owner = devnet.clientFor(devnet.accounts.deployer.privateKey);
    const message = await revertReason(
      owner.simulateContract({
        address: devnet.token.address,
        abi: devnet.token.abi,
        functionName: 'initialize',
        args: ['Evil', 'EVL', '9', owner.account.address],
      }),
    );
    expect(message).toContain('FiatToken: contract is already initialized');
  });

  it('funds four distinct payers with 1,000 USDC each and keeps payTo and facilitator apart', async () => {
    const { accounts } = devnet;
    expect(accounts.payers).toHaveLength(4);
    const addresses = [accounts.deployer, accounts.facilitator, accounts.payTo, ...accounts.payers].map(
      (a) => a.address,
    );
    expect(new Set(addresses).size).toBe(7);
    for (const p of accounts.payers) expect(await devnet.balanceOf(p.address)).toBe(1_000_000_000n);
    expect(await devnet.balanceOf(accounts.payTo.address)).toBe(0n);
  });

  it('settles a signed transferWithAuthorization (v, r, s) for exactly the value, with Transfer and AuthorizationUsed', async () => {
    const { token, accounts } = devnet;
    const from = payer(0);
    const auth = await buildAuthorization(devnet, { from: from.address, value: 12_345n });
    const sig = await signAuthorization(devnet, from.privateKey, auth);
    const before = { from: await devnet.balanceOf(from.address), to: await devnet.balanceOf(auth.to) };
    const facilitator = devnet.clientFor(accounts.facilitator.privateKey);
    const hash = await facilitator.writeContract({
      address: token.address,
      abi: token.abi,
      functionName: 'transferWithAuthorization',
      args: vrsArgs(auth, sig),
    });
    const receipt = await devnet.publicClient.waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe('success');
    expect(await devnet.balanceOf(from.address)).toBe(before.from - 12_345n);
    expect(await devnet.balanceOf(auth.to)).toBe(before.to + 12_345n);
    const events = parseEventLogs({ abi: token.abi, logs: receipt.logs });
    expect(events.map((e) => e.eventName)).toEqual(['AuthorizationUsed', 'Transfer']);
    expect(events[0]!.args).toEqual({ authorizer: from.address, nonce: auth.nonce });
    expect(events[1]!.args).toEqual({ from: from.address, to: auth.to, value: 12_345n });
    expect(
      await devnet.publicClient.readContract({
        address: token.address,
        abi: token.abi,
        functionName: 'authorizationState',
        args: [from.address, auth.nonce],
      }),
    ).toBe(true);

    const again = await revertReason(
      facilitator.writeContract({
        address: token.address,
        abi: token.abi,
        functionName: 'transferWithAuthorization',
        args: vrsArgs(auth, sig),
      }),
    );
    expect(again).toContain('FiatTokenV2: authorization is used or canceled');
    expect(await devnet.balanceOf(from.address)).toBe(before.from - 12_345n);
  });

  it('settles the bytes-signature overload', async () => {
    const { token } = devnet;
    const from = payer(1);
    const auth = await buildAuthorization(devnet, { from: from.address, value: 777n });
    const { signature } = await signAuthorization(devnet, from.privateKey, auth);
    const before = await devnet.balanceOf(auth.to);
    const facilitator = devnet.clientFor(devnet.accounts.facilitator.privateKey);
    const hash = await facilitator.writeContract({
      address: token.address,
      abi: token.abi,
      functionName: 'transferWithAuthorization',
      args: bytesArgs(auth, signature),
    });
    expect((await devnet.publicClient.waitForTransactionReceipt({ hash })).status).toBe('success');
    expect(await devnet.balanceOf(auth.to)).toBe(before + 777n);
  });

  const failures: Array<{
    case: string;
    reason: string;
    make: () => Promise<{ args: ReturnType<typeof vrsArgs> }>;
  }> = [
    {
      case: 'an expired authorization',
      reason: 'FiatTokenV2: authorization is expired',
      make: async () => {
        const now = await devnet.latestTimestamp();
        const auth = await buildAuthorization(devnet, { from: payer(2).address, validBefore: now - 10n });
        return { args: vrsArgs(auth, await signAuthorization(devnet, payer(2).privateKey, auth)) };
      },
    },
    {
      case: 'an authorization that is not yet valid',
      reason: 'FiatTokenV2: authorization is not yet valid',
      make: async () => {
        const now = await devnet.latestTimestamp();
        const auth = await buildAuthorization(devnet, { from: payer(2).address, validAfter: now + 600n });
        return { args: vrsArgs(auth, await signAuthorization(devnet, payer(2).privateKey, auth)) };
      },
    },
    {
      case: 'a signature by another key',
      reason: 'FiatTokenV2: invalid signature',
      make: async () => {
        const auth = await buildAuthorization(devnet, { from: payer(2).address });
        return { args: vrsArgs(auth, await signAuthorization(devnet, payer(3).privateKey, auth)) };
      },
    },
    {
      case: 'a signature over another value',
      reason: 'FiatTokenV2: invalid signature',
      make: async () => {
        const auth = await buildAuthorization(devnet, { from: payer(2).address, value: 1n });
        const sig = await signAuthorization(devnet, payer(2).privateKey, auth);
        return { args: vrsArgs({ ...auth, value: 2n }, sig) };
      },
    },
    {
      case: 'a signature with the wrong EIP-712 domain name',
      reason: 'FiatTokenV2: invalid signature',
      make: async () => {
        const auth = await buildAuthorization(devnet, { from: payer(2).address });
        return {
          args: vrsArgs(
            auth,
            await signAuthorization(devnet, payer(2).privateKey, auth, undefined, { name: 'USDC' }),
          ),
        };
      },
    },
    {
      case: 'more than the balance',
      reason: 'ERC20: transfer amount exceeds balance',
      make: async () => {
        const auth = await buildAuthorization(devnet, { from: payer(2).address, value: 1_000_000_001n });
        return { args: vrsArgs(auth, await signAuthorization(devnet, payer(2).privateKey, auth)) };
      },
    },
  ];

  it.each(failures)('reverts $case with "$reason"', async ({ make, reason }) => {
    const { args } = await make();
    const before = await devnet.balanceOf(payer(2).address);
    const message = await revertReason(
      devnet.clientFor(devnet.accounts.facilitator.privateKey).writeContract({
        address: devnet.token.address,
        abi: devnet.token.abi,
        functionName: 'transferWithAuthorization',
        args,
      }),
    );
    expect(message).toContain(reason);
    expect(await devnet.balanceOf(payer(2).address)).toBe(before);
  });

  it('lets only the payee submit receiveWithAuthorization', async () => {
    const { token, accounts } = devnet;
    const from = payer(3);
    const auth = await buildAuthorization(devnet, { from: from.address, value: 500n });
    const sig = await signAuthorization(devnet, from.privateKey, auth, 'ReceiveWithAuthorization');
    const byFacilitator = await revertReason(
      devnet.clientFor(accounts.facilitator.privateKey).writeContract({
        address: token.address,
        abi: token.abi,
        functionName: 'receiveWithAuthorization',
        args: vrsArgs(auth, sig),
      }),
    );
    expect(byFacilitator).toContain('FiatTokenV2: caller must be the payee');
    const before = await devnet.balanceOf(auth.to);
    const hash = await devnet.clientFor(accounts.payTo.privateKey).writeContract({
      address: token.address,
      abi: token.abi,
      functionName: 'receiveWithAuthorization',
      args: bytesArgs(auth, sig.signature),
    });
    expect((await devnet.publicClient.waitForTransactionReceipt({ hash })).status).toBe('success');
    expect(await devnet.balanceOf(auth.to)).toBe(before + 500n);
  });

  it('cancels an unused authorization so it can no longer be settled', async () => {
    const { token, accounts } = devnet;
    const from = payer(3);
    const auth = await buildAuthorization(devnet, { from: from.address });
    const sig = await signAuthorization(devnet, from.privateKey, auth);
    const { privateKeyToAccount } = await import('viem/accounts');
    const cancelSignature = await privateKeyToAccount(from.privateKey).signTypedData({
      domain: {
        name: token.name,
        version: token.version,
        chainId: devnet.chainId,
        verifyingContract: token.address,
      },
      types: {
        CancelAuthorization: [
          { name: 'authorizer', type: 'address' },
          { name: 'nonce', type: 'bytes32' },
        ],
      },
      primaryType: 'CancelAuthorization',
      message: { authorizer: from.address, nonce: auth.nonce },
    });
    const facilitator = devnet.clientFor(accounts.facilitator.privateKey);
    const hash = await facilitator.writeContract({
      address: token.address,
      abi: token.abi,
      functionName: 'cancelAuthorization',
      args: [from.address, auth.nonce, cancelSignature],
    });
    const receipt = await devnet.publicClient.waitForTransactionReceipt({ hash });
    const [event] = parseEventLogs({
      abi: token.abi,
      logs: receipt.logs,
      eventName: 'AuthorizationCanceled',
    });
    expect(event?.args).toEqual({ authorizer: from.address, nonce: auth.nonce });
    const message = await revertReason(
      facilitator.writeContract({
        address: token.address,
        abi: token.abi,
        functionName: 'transferWithAuthorization',
        args: vrsArgs(auth, sig),
      }),
    );
    expect(message).toContain('FiatTokenV2: authorization is used or canceled');
  });

  it('accepts an ERC-1271 contract wallet as the payer in the bytes form', async () => {
    const owner = payer(3);
    const deployer = devnet.clientFor(devnet.accounts.deployer.privateKey);
    const deployHash = await deployer.deployContract({
      abi: testErc1271WalletAbi,
      bytecode: testErc1271WalletBytecode,
      args: [owner.address],
    });
    const wallet = (await devnet.publicClient.waitForTransactionReceipt({ hash: deployHash }))
      .contractAddress!;
    await devnet.mint(wallet, 5_000n);
    const auth = await buildAuthorization(devnet, { from: wallet, value: 4_000n });
    const { signature } = await signAuthorization(devnet, owner.privateKey, auth);
    const hash = await devnet.clientFor(devnet.accounts.facilitator.privateKey).writeContract({
      address: devnet.token.address,
      abi: devnet.token.abi,
      functionName: 'transferWithAuthorization',
      args: bytesArgs(auth, signature),
    });
    expect((await devnet.publicClient.waitForTransactionReceipt({ hash })).status).toBe('success');
    expect(await devnet.balanceOf(wallet)).toBe(1_000n);

    const forged = await buildAuthorization(devnet, { from: wallet, value: 1_000n });
    const bad = await signAuthorization(devnet, payer(0).privateKey, forged);
    const message = await revertReason(
      devnet.publicClient.simulateContract({
        address: devnet.token.address,
        abi: devnet.token.abi,
        functionName: 'transferWithAuthorization',
        args: bytesArgs(forged, bad.signature),
        account: devnet.accounts.facilitator.address,
      }),
    );
    expect(message).toContain('FiatTokenV2: invalid signature');
  });
});

describe('Multicall3 on the devnet', () => {
  it('answers tryAggregate(false, …) with per-call success and return data like the x402 facilitator expects', async () => {
    const { token, publicClient } = devnet;
    const reverting: Hex = encodeFunctionData({
      abi: token.abi,
      functionName: 'transferWithAuthorization',
      args: vrsArgs(await buildAuthorization(devnet, { from: payer(0).address }), {
        v: 27,
        r: `0x${'11'.repeat(32)}`,
        s: `0x${'22'.repeat(32)}`,
      }),
    });
    // tryAggregate is payable, so it is read through eth_call as the facilitator does
    const { result: results } = await publicClient.simulateContract({
      address: MULTICALL3_ADDRESS,
      abi: multicall3Abi,
      functionName: 'tryAggregate',
      args: [
        false,
        [
          {
            target: token.address,
            callData: encodeFunctionData({
              abi: token.abi,
              functionName: 'balanceOf',
              args: [payer(1).address],
            }),
          },
          {
            target: token.address,
            callData: encodeFunctionData({
              abi: token.abi,
              functionName: 'authorizationState',
              args: [payer(1).address, randomNonce()],
            }),
          },
          { target: token.address, callData: reverting },
        ],
      ],
    });
    expect(results).toHaveLength(3);
    expect(results[0]!.success).toBe(true);
    expect(BigInt(results[0]!.returnData)).toBe(await devnet.balanceOf(payer(1).address));
    expect(results[1]).toEqual({ success: true, returnData: `0x${'0'.repeat(64)}` });
    expect(results[2]!.success).toBe(false);
  });

  it('serves viem multicall (aggregate3) through the chain definition', async () => {
    const { token, publicClient } = devnet;
    const [name, balance] = await publicClient.multicall({
      contracts: [
        { address: token.address, abi: token.abi, functionName: 'name' },
        { address: token.address, abi: token.abi, functionName: 'balanceOf', args: [payer(3).address] },
      ],
      allowFailure: false,
    });
    expect(name).toBe('USD Coin');
    expect(balance).toBe(await devnet.balanceOf(payer(3).address));
  });
});
