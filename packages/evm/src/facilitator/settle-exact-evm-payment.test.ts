import { type Devnet, startDevnet } from '@tollbooth/devnet';
import fc from 'fast-check';
import {
  type Address,
  createWalletClient,
  custom,
  type Hex,
  HttpRequestError,
  http,
  keccak256,
  parseSignature,
  toFunctionSelector,
  zeroAddress,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { estimateContractGas } from 'viem/actions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signTransferAuthorization } from '../client/sign-transfer-authorization';
import { ExactEvmReason, eip3009Abi } from '../constants';
import { settlementStateOf } from '../sending/client-state';
import { buildPayment, buildRequirements } from '../test-fixtures';
import { createAuthorizationNonce } from '../utils/create-authorization-nonce';
import { settleExactEvmPayment, withHeadroom } from './settle-exact-evm-payment';

let devnet: Devnet;
beforeAll(async () => {
  devnet = await startDevnet({ chainId: 8453, payers: 3, payerBalance: 2_000_000n });
});
afterAll(async () => {
  await devnet?.stop();
});

/** The gas the node estimates for settling one freshly signed payment. */
async function estimateSettlement(payerIndex: number, to: Address, value: bigint): Promise<bigint> {
  const payer = privateKeyToAccount(devnet.accounts.payers[payerIndex]!.privateKey);
  const now = Math.floor(Date.now() / 1000);
  const authorization = {
    from: payer.address,
    to,
    value: value.toString(),
    validAfter: String(now - 600),
    validBefore: String(now + 600),
    nonce: createAuthorizationNonce(),
  };
  const signature = await signTransferAuthorization({
    account: payer,
    domain: {
      name: devnet.token.name,
      version: devnet.token.version,
      chainId: devnet.chainId,
      verifyingContract: devnet.token.address,
    },
    authorization,
  });
  const { r, s, yParity } = parseSignature(signature);
  const client = createWalletClient({
    account: privateKeyToAccount(devnet.accounts.facilitator.privateKey),
    chain: devnet.chain,
    transport: http(devnet.rpcUrl),
  });
  return estimateContractGas(client, {
    address: devnet.token.address,
    abi: eip3009Abi,
    functionName: 'transferWithAuthorization',
    args: [
      authorization.from,
      authorization.to,
      value,
      BigInt(authorization.validAfter),
      BigInt(authorization.validBefore),
      authorization.nonce,
      27 + (yParity ?? 0),
      r,
      s,
    ],
  });
}

describe('the cached gas limit of transferWithAuthorization', () => {
  it('covers every payment of the asset when the first estimate was the cheapest kind (warm recipient)', async () => {
    await devnet.mint(devnet.accounts.payTo.address, 1n);
    const limit = withHeadroom(await estimateSettlement(0, devnet.accounts.payTo.address, 1_000n));
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 2 }),
        fc.boolean(),
        // Up to the whole balance: a payer left with zero costs a different storage write.
        fc.bigInt({ min: 1n, max: 2_000_000n }),
        async (payerIndex, freshRecipient, value) => {
          const to = freshRecipient
            ? privateKeyToAccount(generatePrivateKey()).address
            : devnet.accounts.payTo.address;
          expect(await estimateSettlement(payerIndex, to, value)).toBeLessThanOrEqual(limit);
        },
      ),
      { numRuns: 25 },
    );
  });

  it('adds half again, and at least 30 000', () => {
    expect(withHeadroom(50_000n)).toBe(80_000n);
    expect(withHeadroom(100_000n)).toBe(150_000n);
  });
});

describe('a settlement that runs out of gas behind a proxy (USDC is one)', () => {
  it('drops the cached gas limit, so the next payment of the asset is estimated afresh and settles', async () => {
    // The token's code behind a minimal proxy (EIP-1167) that keeps its storage: the delegatecall
    // gets 63/64 of the gas, and the proxy reverts with the rest (gas used below the limit).
    const token = devnet.token.address;
    const implementation = privateKeyToAccount(generatePrivateKey()).address;
    const code = (await devnet.publicClient.getCode({ address: token }))!;
    await devnet.testClient.setCode({ address: implementation, bytecode: code });
    await devnet.testClient.setCode({
      address: token,
      bytecode: `0x363d3d373d3d3d363d73${implementation.slice(2)}5af43d82803e903d91602b57fd5bf3` as Hex,
    });
    try {
      const account = privateKeyToAccount(generatePrivateKey());
      await devnet.testClient.setBalance({ address: account.address, value: 10n ** 18n });
      // An estimate that the asset's cost has outgrown (an upgrade, a costlier path).
      let staleEstimate = true;
      const client = createWalletClient({
        account,
        chain: devnet.chain,
        transport: custom({
          async request({ method, params }) {
            if (method === 'eth_estimateGas' && staleEstimate) return '0x2710';
            const response = await fetch(devnet.rpcUrl, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
            });
            const body = (await response.json()) as { result?: unknown; error?: { message: string } };
            if (body.error) throw Object.assign(new Error(body.error.message), body.error);
            // viem estimates a local account's transaction with eth_fillTransaction where it can.
            const filled = body.result as { tx?: { gas?: string } } | undefined;
            if (method === 'eth_fillTransaction' && staleEstimate && filled?.tx) filled.tx.gas = '0x2710';
            return body.result;
          },
        }),
      });
      const requirements = buildRequirements({ payTo: devnet.accounts.payTo.address, asset: token });
      const payer = privateKeyToAccount(devnet.accounts.payers[0]!.privateKey);
      const settle = async () =>
        settleExactEvmPayment({
          client,
          payload: await buildPayment(payer, requirements),
          requirements,
          pollingIntervalMs: 20,
          receiptTimeoutMs: 5_000,
        });
      const first = await settle();
      expect(first).toMatchObject({ success: false, errorReason: ExactEvmReason.transactionFailed });
      expect(first.errorMessage).toMatch(/ran out of gas/);
      staleEstimate = false;
      expect(await settle()).toMatchObject({ success: true });
    } finally {
      await devnet.testClient.setCode({ address: token, bytecode: code });
    }
  });
});

describe('a payment whose pending settlement was replaced (its nonce taken, never mined)', () => {
  it('is not waited for: settle asks the node for its receipt, and sends the payment again once it has none', async () => {
    // A gas account of its own, and a sender that sends kept-alive transactions again soon.
    const gasKey = generatePrivateKey();
    const gasAccount = privateKeyToAccount(gasKey);
    await devnet.testClient.setBalance({ address: gasAccount.address, value: 10n ** 18n });
    let dropReceipts = false;
    const refusedAgain = new Set<(hash: Hex, error: unknown) => void>();
    const client = createWalletClient({
      account: gasAccount,
      chain: devnet.chain,
      transport: custom(
        {
          async request({ method, params }) {
            if (method === 'eth_getTransactionReceipt' && dropReceipts)
              throw new HttpRequestError({ url: devnet.rpcUrl, details: 'socket hang up' });
            try {
              return await rpc(method, params);
            } catch (error) {
              if (method === 'eth_sendRawTransaction')
                for (const refused of refusedAgain) refused(keccak256((params as [Hex])[0]), error);
              throw error;
            }
          },
        },
        { retryCount: 0 },
      ),
    });
    settlementStateOf(client, { pollingIntervalMs: 20, rebroadcastAfterMs: 50 });
    const account = privateKeyToAccount(devnet.accounts.payers[1]!.privateKey);
    const requirements = buildRequirements({
      payTo: devnet.accounts.payTo.address,
      asset: devnet.token.address,
    });
    const payment = await buildPayment(account, requirements);
    const before = await devnet.balanceOf(account.address);
    const settle = (receiptTimeoutMs: number) =>
      settleExactEvmPayment({ client, payload: payment, requirements, receiptTimeoutMs });

    let pending: Awaited<ReturnType<typeof settleExactEvmPayment>>;
    await devnet.setAutomine(false);
    try {
      pending = await settle(300);
      expect(pending).toEqual({
        success: false,
        errorReason: ExactEvmReason.settlementPending,
        errorMessage: `no receipt for ${pending.transaction} within 300 ms; reconcile it, never send it again`,
        payer: account.address,
        transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        network: 'eip155:8453',
      });
      // The account's owner replaces it in the pool (same nonce, higher fees), and that one is mined.
      const sent = await devnet.publicClient.getTransaction({ hash: pending.transaction as Hex });
      // Sent again while the replacement waits in the pool, the bytes are refused as an underpriced
      // replacement; once it is mined, as a nonce too low: either is a nonce taken, whichever
      // comes first on this machine.
      const refusedForItsNonce = new Promise<void>((resolve) => {
        refusedAgain.add((hash, error) => {
          if (
            hash === pending.transaction &&
            /nonce too low|replacement transaction underpriced/i.test(String(error))
          )
            resolve();
        });
      });
      await devnet.clientFor(gasKey, { nonceManager: false }).sendTransaction({
        to: gasAccount.address,
        value: 0n,
        nonce: sent.nonce,
        maxFeePerGas: sent.maxFeePerGas! * 2n,
        maxPriorityFeePerGas: sent.maxPriorityFeePerGas! * 2n,
      });
      await devnet.mine();
      // The sender sends the replaced bytes again and the node refuses them (nonce taken): the
      // sender stops keeping them alive once that answer has reached it (promise callbacks only,
      // all run before the next macrotask).
      await refusedForItsNonce;
      await new Promise<void>((resolve) => setImmediate(resolve));
      expect(settlementStateOf(client).sender.isPending(pending.transaction as Hex)).toBe(false);
    } finally {
      await devnet.setAutomine(true);
    }
    // Its receipt cannot be read: the outcome is unknown, nothing is sent.
    dropReceipts = true;
    await expect(settle(60_000)).rejects.toMatchObject({
      name: 'FacilitatorError',
      kind: 'network',
      operation: 'settle',
    });
    dropReceipts = false;
    // It has no receipt: the payment is sent again, at once (not after waiting 60 s for the old one).
    const again = await settle(60_000);
    expect(again).toMatchObject({ success: true, payer: account.address, amount: '10000' });
    expect(again.transaction).not.toBe(pending.transaction);
    expect(before - (await devnet.balanceOf(account.address))).toBe(10_000n);
  });
});

describe('the receipt polling interval', () => {
  it("is the one given, not the client's: a transfer mined after the first look is found long before the client's own interval", async () => {
    const gasAccount = privateKeyToAccount(generatePrivateKey());
    await devnet.testClient.setBalance({ address: gasAccount.address, value: 10n ** 18n });
    const firstLook = new Set<() => void>();
    const client = createWalletClient({
      account: gasAccount,
      chain: devnet.chain,
      pollingInterval: 600_000,
      transport: custom({
        async request({ method, params }) {
          const result = await rpc(method, params);
          // Told once the node has answered that it has no receipt yet.
          if (method === 'eth_getTransactionReceipt' && result === null) for (const told of firstLook) told();
          return result;
        },
      }),
    });
    const account = privateKeyToAccount(devnet.accounts.payers[2]!.privateKey);
    const requirements = buildRequirements({
      payTo: devnet.accounts.payTo.address,
      asset: devnet.token.address,
    });
    const payment = await buildPayment(account, requirements);
    let receipt: Awaited<ReturnType<typeof settleExactEvmPayment>>;
    await devnet.setAutomine(false);
    try {
      const looked = new Promise<void>((resolve) => firstLook.add(resolve));
      const settling = settleExactEvmPayment({
        client,
        payload: payment,
        requirements,
        pollingIntervalMs: 20,
        // A hang guard for a loaded machine, far below the client's 10 minutes.
        receiptTimeoutMs: 20_000,
      });
      await looked;
      await devnet.mine();
      receipt = await settling;
    } finally {
      await devnet.setAutomine(true);
    }
    expect(receipt).toMatchObject({ success: true, payer: account.address, amount: '10000' });
  });
});

describe('settling with simulate: false and a cached gas limit', () => {
  it.each([
    ['a payer without funds', 'poor', ExactEvmReason.insufficientBalance, 'balance 0 is below 10000'],
    ['a transfer to the zero address', 'zero', ExactEvmReason.transactionFailed, undefined],
    // The revert is plain, but the token cannot be read afterwards: no reason beyond the revert.
    [
      'a payer without funds, the token unreadable after',
      'undiagnosed',
      ExactEvmReason.transactionFailed,
      undefined,
    ],
  ] as const)(
    'broadcasts unchecked and answers from the mined revert: %s',
    async (_label, kind, reason, message) => {
      const client = await gasClient(
        kind === 'undiagnosed' ? callOf('authorizationState(address,bytes32)') : undefined,
      );
      const payTo = kind === 'zero' ? zeroAddress : devnet.accounts.payTo.address;
      const requirements = buildRequirements({ payTo, asset: devnet.token.address });
      // A first settlement of the asset leaves its gas limit cached: nothing estimates the next one.
      const good = buildRequirements({ payTo: devnet.accounts.payTo.address, asset: devnet.token.address });
      const payer = privateKeyToAccount(devnet.accounts.payers[2]!.privateKey);
      expect(
        await settleExactEvmPayment({ client, payload: await buildPayment(payer, good), requirements: good }),
      ).toMatchObject({ success: true });
      const account = privateKeyToAccount(generatePrivateKey());
      if (kind === 'zero') await devnet.mint(account.address, 10_000n);
      const payment = await buildPayment(account, requirements);
      const receipt = await settleExactEvmPayment({
        client,
        payload: payment,
        requirements,
        simulate: false,
      });
      expect(receipt).toEqual({
        success: false,
        errorReason: reason,
        ...(message ? { errorMessage: message } : {}),
        payer: account.address,
        transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        network: 'eip155:8453',
      });
      const mined = await devnet.publicClient.getTransactionReceipt({ hash: receipt.transaction as Hex });
      expect(mined.status).toBe('reverted');
    },
  );
});

describe('the gas limit of a settlement', () => {
  it("is estimated for each asset on its own, and for every smart wallet's signature", async () => {
    const client = await gasClient();
    const payer = privateKeyToAccount(devnet.accounts.payers[2]!.privateKey);
    const settle = async (asset: Hex, from: Hex | undefined) => {
      const requirements = buildRequirements({ payTo: devnet.accounts.payTo.address, asset });
      const signed = await buildPayment(payer, requirements);
      // A smart wallet `from` whose isValidSignature takes a 97-byte signature (any, for these).
      const payload = from
        ? {
            ...signed,
            payload: {
              signature: `0x${'ab'.repeat(97)}`,
              authorization: { ...(signed.payload as { authorization: object }).authorization, from },
            },
          }
        : signed;
      return settleExactEvmPayment({ client, payload, requirements });
    };
    // The same token code behind a proxy that first burns about 100 000 gas: the costlier asset.
    const costly = await costlyTokenCopy(payer.address);
    const cheapWallet = await walletAt(ACCEPT_ANY_SIGNATURE);
    const costlyWallet = await walletAt(BURN_THEN_ACCEPT_ANY_SIGNATURE);
    expect(await settle(devnet.token.address, undefined)).toMatchObject({ success: true });
    expect(await settle(costly, undefined)).toMatchObject({ success: true });
    expect(await settle(devnet.token.address, cheapWallet)).toMatchObject({
      success: true,
      payer: cheapWallet,
    });
    expect(await settle(devnet.token.address, costlyWallet)).toMatchObject({
      success: true,
      payer: costlyWallet,
    });
  });
});

describe('a node that does not answer while settling', () => {
  it.each([
    [
      'the gas estimate',
      (method: string) => method === 'eth_estimateGas' || method === 'eth_fillTransaction',
    ],
    ["the sender's nonce", (method: string) => method === 'eth_getTransactionCount'],
  ])(
    'makes settle throw a network FacilitatorError when %s gets no answer, sending nothing',
    async (_label, unanswered) => {
      const client = await gasClient(unanswered);
      const account = privateKeyToAccount(devnet.accounts.payers[2]!.privateKey);
      const requirements = buildRequirements({
        payTo: devnet.accounts.payTo.address,
        asset: devnet.token.address,
      });
      const before = await devnet.balanceOf(account.address);
      const receipt = settleExactEvmPayment({
        client,
        payload: await buildPayment(account, requirements),
        requirements,
      });
      await expect(receipt).rejects.toMatchObject({
        name: 'FacilitatorError',
        kind: 'network',
        operation: 'settle',
      });
      expect(await devnet.publicClient.getTransactionCount({ address: client.account.address })).toBe(0);
      expect(await devnet.balanceOf(account.address)).toBe(before);
    },
  );
});

/** isValidSignature of any input: returns the ERC-1271 magic value. */
const ACCEPT_ANY_SIGNATURE = '0x631626ba7e60e01b60005260206000f3';
/** The same after a loop of 4 096 rounds (about 100 000 gas). */
const BURN_THEN_ACCEPT_ANY_SIGNATURE = '0x6110005b600190038060035750631626ba7e60e01b60005260206000f3';

/** Whether a JSON-RPC request is an eth_call of the function `signature`. */
const callOf =
  (signature: string) =>
  (method: string, params: unknown): boolean => {
    const call = (params as [{ data?: string; input?: string }] | undefined)?.[0];
    return (
      method === 'eth_call' && (call?.data ?? call?.input ?? '').startsWith(toFunctionSelector(signature))
    );
  };

/**
 * A wallet client of a fresh account with gas money; its node gives no answer (an HTTP failure, as
 * a dropped connection) to the requests `unanswered` picks.
 */
async function gasClient(unanswered: (method: string, params: unknown) => boolean = () => false) {
  const account = privateKeyToAccount(generatePrivateKey());
  await devnet.testClient.setBalance({ address: account.address, value: 10n ** 18n });
  const transport = custom(
    {
      async request({ method, params }) {
        if (unanswered(method, params))
          throw new HttpRequestError({ url: devnet.rpcUrl, details: 'socket hang up' });
        return rpc(method, params);
      },
    },
    { retryCount: 0 },
  );
  return createWalletClient({ account, chain: devnet.chain, transport });
}

/** A contract wallet with the runtime `code` at a fresh address, holding 10 000 of the token. */
async function walletAt(code: Hex): Promise<Hex> {
  const wallet = privateKeyToAccount(generatePrivateKey()).address;
  await devnet.testClient.setCode({ address: wallet, bytecode: code });
  await devnet.mint(wallet, 10_000n);
  return wallet;
}

/**
 * A second token "USD Coin" (version 2) at a fresh address: the devnet token's code behind a proxy
 * (EIP-1167 after a loop of about 100 000 gas) with storage of its own, and 10 000 for `holder`.
 */
async function costlyTokenCopy(holder: Hex): Promise<Hex> {
  const implementation = privateKeyToAccount(generatePrivateKey()).address;
  const code = (await devnet.publicClient.getCode({ address: devnet.token.address }))!;
  await devnet.testClient.setCode({ address: implementation, bytecode: code });
  const token = privateKeyToAccount(generatePrivateKey()).address;
  await devnet.testClient.setCode({
    address: token,
    // The loop (13 bytes), then EIP-1167 with its jump target moved by 13 (0x2b + 0x0d = 0x38).
    bytecode: `0x6110005b600190038060035750363d3d373d3d3d363d73${implementation.slice(2)}5af43d82803e903d91603857fd5bf3`,
  });
  const deployer = devnet.clientFor(devnet.accounts.deployer.privateKey);
  for (const request of [
    { functionName: 'initialize', args: ['USD Coin', 'USDC', '2', devnet.accounts.deployer.address] },
    { functionName: 'mint', args: [holder, 10_000n] },
  ] as const) {
    const hash = await deployer.writeContract({ address: token, abi: devnet.token.abi, ...request } as never);
    expect((await devnet.publicClient.waitForTransactionReceipt({ hash })).status).toBe('success');
  }
  return token;
}

/** One JSON-RPC call to the devnet. */
async function rpc(method: string, params: unknown): Promise<unknown> {
  const response = await fetch(devnet.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: unknown; error?: { code: number; message: string } };
  if (body.error) throw Object.assign(new Error(body.error.message), body.error);
  return body.result;
}
