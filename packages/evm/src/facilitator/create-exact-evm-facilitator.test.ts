import { FacilitatorError, type PaymentPayload, type PaymentRequirements } from '@tollbooth/core';
import { type Devnet, startDevnet, testErc1271WalletAbi, testErc1271WalletBytecode } from '@tollbooth/devnet';
import {
  createPublicClient,
  createWalletClient,
  custom,
  type Hex,
  HttpRequestError,
  http,
  MethodNotFoundRpcError,
  serializeErc6492Signature,
  toFunctionSelector,
  zeroAddress,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signTransferAuthorization } from '../client/sign-transfer-authorization';
import { ExactEvmReason } from '../constants';
import { reconcileExactEvmPayment } from '../reconcile/reconcile-exact-evm-payment';
import { createExactEvmScheme } from '../server/create-exact-evm-scheme';
import { buildPayment, buildRequirements, tamper } from '../test-fixtures';
import { createAuthorizationNonce } from '../utils/create-authorization-nonce';
import {
  type CreateExactEvmFacilitatorReturnType,
  createExactEvmFacilitator,
} from './create-exact-evm-facilitator';
import { settleExactEvmPayment } from './settle-exact-evm-payment';
import { verifyExactEvmPayment } from './verify-exact-evm-payment';

let devnet: Devnet;
let facilitator: CreateExactEvmFacilitatorReturnType;
let requirements: PaymentRequirements;
const now = () => Math.floor(Date.now() / 1000);
const payer = (i: number) => privateKeyToAccount(devnet.accounts.payers[i]!.privateKey);

beforeAll(async () => {
  devnet = await startDevnet({ chainId: 8453, payers: 4 });
  facilitator = createExactEvmFacilitator({
    account: devnet.accounts.facilitator.privateKey,
    chain: devnet.chain,
    rpcUrl: devnet.rpcUrl,
    pollingIntervalMs: 50,
  });
  requirements = buildRequirements({ payTo: devnet.accounts.payTo.address, asset: devnet.token.address });
});
afterAll(async () => {
  await devnet?.stop();
});

/** One JSON-RPC call to the devnet, for transports that intercept some calls. */
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

/** Balances of payer and payTo, to check that a refusal moved nothing. */
async function balances(address: `0x${string}`) {
  return [await devnet.balanceOf(address), await devnet.balanceOf(devnet.accounts.payTo.address)];
}

describe('createExactEvmFacilitator on a devnet', () => {
  it('verifies, then settles: the payer loses exactly the price, once', async () => {
    const account = payer(0);
    const payment = await buildPayment(account, requirements);
    const [payerBefore, payToBefore] = await balances(account.address);
    expect(await facilitator.verify(payment, requirements)).toEqual({
      isValid: true,
      payer: account.address,
    });
    const receipt = await facilitator.settle(payment, requirements);
    expect(receipt).toMatchObject({
      success: true,
      network: 'eip155:8453',
      payer: account.address,
      amount: '10000',
    });
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    const [payerAfter, payToAfter] = await balances(account.address);
    expect(payerBefore! - payerAfter!).toBe(10_000n);
    expect(payToAfter! - payToBefore!).toBe(10_000n);

    // The same authorization again: refused at verify and at settle, nothing moves.
    const { nonce } = (payment.payload as { authorization: { nonce: Hex } }).authorization;
    const used = `nonce ${nonce} of ${account.address} is already used`;
    expect(await facilitator.verify(payment, requirements)).toEqual({
      isValid: false,
      invalidReason: ExactEvmReason.nonceAlreadyUsed,
      invalidMessage: used,
      payer: account.address,
    });
    const replay = await facilitator.settle(payment, requirements);
    expect(replay).toMatchObject({
      success: false,
      errorReason: ExactEvmReason.nonceAlreadyUsed,
      errorMessage: used,
      transaction: '',
    });
    expect(await balances(account.address)).toEqual([payerAfter, payToAfter]);
  });

  it('settles a payment whose signature uses v = 0/1 (normalised to 27/28 for the token)', async () => {
    const account = payer(1);
    const payment = await buildPayment(account, requirements);
    const payload = payment.payload as { signature: Hex };
    const v = Number.parseInt(payload.signature.slice(130), 16) - 27;
    const compact = {
      ...payment,
      payload: { ...payload, signature: `${payload.signature.slice(0, 130)}0${v}` },
    };
    expect(await facilitator.settle(compact, requirements)).toMatchObject({ success: true });
  });

  it.each<
    [
      string,
      (account: ReturnType<typeof payer>) => Promise<[PaymentPayload, PaymentRequirements]>,
      string,
      RegExp,
    ]
  >([
    [
      'a tampered amount',
      async (a) => [
        tamper(await buildPayment(a, requirements), { value: '1' }),
        { ...requirements, amount: '1' },
      ],
      ExactEvmReason.signature,
      /^signature does not match the payer$/,
    ],
    [
      'another recipient',
      async (a) => [
        await buildPayment(a, { ...requirements, payTo: devnet.accounts.deployer.address }),
        requirements,
      ],
      ExactEvmReason.recipientMismatch,
      /^authorization pays 0x[0-9a-fA-F]{40}, not 0x[0-9a-fA-F]{40}$/,
    ],
    [
      'the wrong EIP-712 name (token is "USD Coin")',
      async (a) => {
        const wrong = { ...requirements, extra: { name: 'USDC', version: '2' } };
        return [await buildPayment(a, wrong), wrong];
      },
      ExactEvmReason.tokenNameMismatch,
      /^token name is "USD Coin", not "USDC"$/,
    ],
    [
      'the wrong EIP-712 version (token is "2")',
      async (a) => {
        const wrong = { ...requirements, extra: { name: 'USD Coin', version: '1' } };
        return [await buildPayment(a, wrong), wrong];
      },
      ExactEvmReason.tokenVersionMismatch,
      /^token version is "2", not "1"$/,
    ],
    [
      'an expired authorization',
      async (a) => [await buildPayment(a, requirements, now() - 120), requirements],
      ExactEvmReason.validBefore,
      /^authorization expires at \d+, less than 6 s from now$/,
    ],
    [
      'an authorization not valid yet',
      async (a) => [await signedPayment(a, { validAfter: String(now() + 600) }), requirements],
      ExactEvmReason.validAfter,
      /^authorization is not valid before \d+$/,
    ],
    [
      'another network',
      async (a) => [await buildPayment(a, { ...requirements, network: 'eip155:84532' }), requirements],
      ExactEvmReason.networkMismatch,
      /^payment network eip155:84532 does not match eip155:8453$/,
    ],
    [
      'a token that is not deployed',
      async (a) => {
        const ghost = { ...requirements, asset: '0x000000000000000000000000000000000000dEaD' };
        return [await buildPayment(a, ghost), ghost];
      },
      ExactEvmReason.assetNotDeployed,
      /^no contract at 0x000000000000000000000000000000000000dEaD on eip155:8453$/,
    ],
  ])(
    'refuses %s at verify and settle with the payer and why, moving no money',
    async (_label, build, reason, message) => {
      const account = payer(2);
      const [payment, reqs] = await build(account);
      const before = await balances(account.address);
      expect(await facilitator.verify(payment, reqs)).toEqual({
        isValid: false,
        invalidReason: reason,
        invalidMessage: expect.stringMatching(message),
        payer: account.address,
      });
      expect(await facilitator.settle(payment, reqs)).toEqual({
        success: false,
        errorReason: reason,
        errorMessage: expect.stringMatching(message),
        payer: account.address,
        transaction: '',
        network: 'eip155:8453',
      });
      expect(await balances(account.address)).toEqual(before);
    },
  );

  it('refuses a payer without enough tokens with insufficient_balance', async () => {
    const poor = privateKeyToAccount(generatePrivateKey());
    const payment = await buildPayment(poor, requirements);
    expect(await facilitator.verify(payment, requirements)).toEqual({
      isValid: false,
      invalidReason: ExactEvmReason.insufficientBalance,
      invalidMessage: 'balance 0 is below 10000',
      payer: poor.address,
    });
    expect(await facilitator.settle(payment, requirements)).toMatchObject({
      success: false,
      errorReason: ExactEvmReason.insufficientBalance,
      errorMessage: 'balance 0 is below 10000',
      payer: poor.address,
    });
  });

  it('settles 20 payments concurrently from one facilitator account', async () => {
    const payments = await Promise.all(
      Array.from({ length: 20 }, (_, i) => buildPayment(payer(i % 4), requirements)),
    );
    const payToBefore = await devnet.balanceOf(devnet.accounts.payTo.address);
    const results = await Promise.all(payments.map((p) => facilitator.settle(p, requirements)));
    expect(results.filter((r) => r.success)).toHaveLength(20);
    expect(new Set(results.map((r) => r.transaction)).size).toBe(20);
    expect((await devnet.balanceOf(devnet.accounts.payTo.address)) - payToBefore).toBe(200_000n);
  });

  it('settles the other 19 of 20 concurrent settlements when the node refuses one (no one waits behind its nonce)', async () => {
    let sends = 0;
    // Its own gas account: another facilitator of this file may still keep a transaction alive.
    const key = generatePrivateKey();
    await devnet.testClient.setBalance({ address: privateKeyToAccount(key).address, value: 10n ** 18n });
    const refusing = createExactEvmFacilitator({
      account: key,
      chain: devnet.chain,
      transport: custom({
        async request({ method, params }) {
          // The node refuses the fifth transaction outright; it never reaches the chain.
          if (method === 'eth_sendRawTransaction' && ++sends === 5)
            throw Object.assign(new Error('insufficient funds for gas * price + value'), { code: -32000 });
          return rpc(method, params);
        },
      }),
      pollingIntervalMs: 50,
      // Long enough for 19 receipts on a loaded machine; a nonce gap would still hold them past it.
      receiptTimeoutMs: 20_000,
    });
    const payments = await Promise.all(
      Array.from({ length: 20 }, (_, i) => buildPayment(payer(i % 4), requirements)),
    );
    const payToBefore = await devnet.balanceOf(devnet.accounts.payTo.address);
    const results = await Promise.all(payments.map((p) => refusing.settle(p, requirements)));
    const refused = results.filter((r) => !r.success);
    expect(refused).toEqual([
      expect.objectContaining({ errorReason: ExactEvmReason.transactionFailed, transaction: '' }),
    ]);
    expect(new Set(results.filter((r) => r.success).map((r) => r.transaction)).size).toBe(19);
    expect((await devnet.balanceOf(devnet.accounts.payTo.address)) - payToBefore).toBe(190_000n);
    // The refused payment moved nothing: its authorization is still unused.
    const lost = payments[results.findIndex((r) => !r.success)]!.payload as {
      authorization: { from: Hex; nonce: Hex };
    };
    expect(
      await devnet.publicClient.readContract({
        address: devnet.token.address,
        abi: devnet.token.abi,
        functionName: 'authorizationState',
        args: [lost.authorization.from, lost.authorization.nonce],
      }),
    ).toBe(false);
  }, 60_000);

  it('keeps settling after a pending settlement transaction was dropped, and the dropped one still lands under its hash', async () => {
    const dropping = createExactEvmFacilitator({
      account: devnet.accounts.facilitator.privateKey,
      chain: devnet.chain,
      rpcUrl: devnet.rpcUrl,
      pollingIntervalMs: 50,
      receiptTimeoutMs: 1_000,
      rebroadcastAfterMs: 200,
    });
    const account = payer(2);
    const before = await devnet.balanceOf(account.address);
    const lost = await buildPayment(account, requirements);
    await devnet.setAutomine(false);
    let pending: Awaited<ReturnType<typeof dropping.settle>>;
    try {
      pending = await dropping.settle(lost, requirements);
      expect(pending).toMatchObject({ errorReason: ExactEvmReason.settlementPending });
      await devnet.testClient.request({ method: 'anvil_dropAllTransactions' } as never);
      expect(await devnet.publicClient.request({ method: 'txpool_status' } as never)).toEqual({
        pending: '0x0',
        queued: '0x0',
      });
    } finally {
      await devnet.setAutomine(true);
    }
    const next = await buildPayment(account, requirements);
    const receipt = await dropping.settle(next, requirements);
    expect(receipt).toMatchObject({ success: true, payer: account.address });
    // The dropped transaction was sent again with the same bytes: the hash reported as pending landed.
    const landed = await devnet.publicClient.getTransactionReceipt({ hash: pending.transaction as Hex });
    expect(landed.status).toBe('success');
    expect(before - (await devnet.balanceOf(account.address))).toBe(20_000n);
  });

  it('waits for its own pending transaction when the same payment is settled again, and answers success with its hash (no second transfer sent to revert)', async () => {
    const key = generatePrivateKey();
    await devnet.testClient.setBalance({ address: privateKeyToAccount(key).address, value: 10n ** 18n });
    // Tells the test when the facilitator asks the node for a receipt, so the block is mined while
    // the third settlement waits for its transaction, not after a guessed delay.
    let receiptAsked: (() => void) | undefined;
    const transport = http(devnet.rpcUrl, {
      onFetchRequest: (_request, init) => {
        if (typeof init.body === 'string' && init.body.includes('eth_getTransactionReceipt'))
          receiptAsked?.();
      },
    });
    const twice = createExactEvmFacilitator({
      account: key,
      chain: devnet.chain,
      transport,
      pollingIntervalMs: 50,
      receiptTimeoutMs: 1_000,
    });
    const account = payer(1);
    const payment = await buildPayment(account, requirements);
    const before = await devnet.balanceOf(account.address);
    let first: Awaited<ReturnType<typeof twice.settle>>;
    let second: Awaited<ReturnType<typeof twice.settle>>;
    await devnet.setAutomine(false);
    try {
      first = await twice.settle(payment, requirements);
      expect(first).toMatchObject({ errorReason: ExactEvmReason.settlementPending });
      // The client retries the same payload; the authorization is still unused on chain, so the
      // gate's reconcile settles again, while the first transaction is still in the pool.
      expect(await twice.settle(payment, requirements)).toMatchObject({
        errorReason: ExactEvmReason.settlementPending,
        transaction: first.transaction,
      });
      const asked = new Promise<void>((resolve) => {
        receiptAsked = resolve;
      });
      const settling = twice.settle(payment, requirements);
      await asked;
      await devnet.mine();
      second = await settling;
    } finally {
      await devnet.setAutomine(true);
    }
    expect(second).toMatchObject({ success: true, transaction: first.transaction });
    expect(before - (await devnet.balanceOf(account.address))).toBe(10_000n);
  });

  it('judges with a chain reader given as rpcUrl, only from a node of the payment network', async () => {
    const account = payer(2);
    const payment = await buildPayment(account, requirements);
    const input = { payload: payment, requirements, now: now() };
    const fromUrl = createExactEvmScheme({ rpcUrl: devnet.rpcUrl });
    const byNetwork = createExactEvmScheme({ rpcUrl: { 'eip155:8453': devnet.rpcUrl } });
    expect(await fromUrl.reconcile!(input)).toEqual({ status: 'unsettled' });
    const settled = await facilitator.settle(payment, requirements);
    expect(settled.success).toBe(true);
    for (const scheme of [fromUrl, byNetwork]) {
      expect(await scheme.reconcile!(input)).toMatchObject({
        status: 'settled',
        receipt: { transaction: settled.transaction, payer: account.address, amount: '10000' },
      });
      expect(await scheme.chainStatus!('eip155:8453')).toMatchObject({ ok: true });
      expect(scheme.hasChainReader!('eip155:8453')).toBe(true);
    }
    expect(byNetwork.hasChainReader!('eip155:84532')).toBe(false);
    // A node of another chain is never asked about a payment: its answers would be about other coins.
    const origin = new URL(devnet.rpcUrl).origin;
    const elsewhere = { ...input, requirements: { ...requirements, network: 'eip155:84532' } };
    const wrongNode = createExactEvmScheme({ rpcUrl: { 'eip155:84532': devnet.rpcUrl } });
    for (const scheme of [fromUrl, wrongNode]) {
      expect(await scheme.reconcile!(elsewhere)).toEqual({
        status: 'unknown',
        message: `chain reader ${origin} serves eip155:8453, not eip155:84532`,
      });
      expect(await scheme.chainStatus!('eip155:84532')).toEqual({
        ok: false,
        message: `chain reader ${origin} serves eip155:8453, not eip155:84532`,
      });
    }
    const silent = createExactEvmScheme({ rpcUrl: 'http://127.0.0.1:9' });
    expect(await silent.reconcile!(input)).toMatchObject({
      status: 'unknown',
      message: expect.stringMatching(/^chain reader http:\/\/127\.0\.0\.1:9 did not answer eth_chainId/),
    });
    expect(() => createExactEvmScheme({ rpcUrl: { base: 'ftp://x' } })).toThrow(
      /rpcUrl: "base" is not an eip155 network/,
    );
    expect(() => createExactEvmScheme({ rpcUrl: 'node.example' })).toThrow(/rpcUrl must be an http\(s\) URL/);
  });

  it('answers settlement_pending with the hash when the receipt does not come, and reconcile finds it once mined', async () => {
    const slow = createExactEvmFacilitator({
      account: devnet.accounts.facilitator.privateKey,
      chain: devnet.chain,
      rpcUrl: devnet.rpcUrl,
      pollingIntervalMs: 50,
      receiptTimeoutMs: 600,
    });
    const scheme = createExactEvmScheme({ publicClient: devnet.publicClient });
    const account = payer(3);
    const payment = await buildPayment(account, requirements);
    const before = await devnet.balanceOf(account.address);
    await devnet.setAutomine(false);
    try {
      const pending = await slow.settle(payment, requirements);
      expect(pending).toMatchObject({ success: false, errorReason: ExactEvmReason.settlementPending });
      expect(pending.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      const input = { payload: payment, requirements, transaction: pending.transaction, now: now() };
      expect(await scheme.reconcile!(input)).toMatchObject({ status: 'unknown' });
      await devnet.mine();
      expect(await scheme.reconcile!(input)).toEqual({
        status: 'settled',
        receipt: {
          success: true,
          transaction: pending.transaction,
          network: 'eip155:8453',
          payer: account.address,
          amount: '10000',
        },
      });
      // Without the hash, the logs lead to the same transaction.
      expect(await scheme.reconcile!({ ...input, transaction: undefined })).toMatchObject({
        status: 'settled',
        receipt: { transaction: pending.transaction },
      });
      expect(before - (await devnet.balanceOf(account.address))).toBe(10_000n);
    } finally {
      await devnet.setAutomine(true);
    }
  });

  it("reconciles an unused authorization as expired only once the chain's time is past validBefore by the grace blocks", async () => {
    const publicClient = createPublicClient({ chain: devnet.chain, transport: http(devnet.rpcUrl) });
    const payment = await buildPayment(payer(0), requirements);
    const validBefore = BigInt(
      (payment.payload as { authorization: { validBefore: string } }).authorization.validBefore,
    );
    const input = { client: publicClient, payload: payment, requirements };
    expect(await reconcileExactEvmPayment(input)).toEqual({ status: 'unsettled' });
    // The chain's clock moves past validBefore in a snapshot, given back after the test.
    const snapshot = await devnet.testClient.snapshot();
    try {
      await devnet.testClient.setNextBlockTimestamp({ timestamp: validBefore });
      await devnet.mine();
      // The head is at validBefore: no block can include the transfer, but a reorg of the last
      // blocks could still bring one back that does. Five blocks deep (the default) it counts.
      for (let deep = 0; deep < 5; deep++) {
        expect(await reconcileExactEvmPayment(input), `${deep} blocks past`).toEqual({ status: 'unsettled' });
        await devnet.mine();
      }
      expect(await reconcileExactEvmPayment(input)).toEqual({ status: 'expired' });
      expect(await reconcileExactEvmPayment({ ...input, expiryGraceBlocks: 6n })).toEqual({
        status: 'unsettled',
      });
      const scheme = createExactEvmScheme({ publicClient, expiryGraceBlocks: 0 });
      expect(await scheme.reconcile!({ payload: payment, requirements, now: 0 })).toEqual({
        status: 'expired',
      });
    } finally {
      await devnet.testClient.revert({ id: snapshot });
    }
    expect(() => createExactEvmScheme({ expiryGraceBlocks: -1 })).toThrow(
      /expiryGraceBlocks must be a non-negative integer/,
    );
  });

  it('accepts an ERC-1271 smart wallet payer through the chain, which preVerify leaves to it only when told', async () => {
    const owner = payer(1);
    const deployer = devnet.clientFor(devnet.accounts.deployer.privateKey);
    const deployHash = await deployer.deployContract({
      abi: testErc1271WalletAbi,
      bytecode: testErc1271WalletBytecode,
      args: [owner.address],
    });
    const wallet = (await deployer.waitForTransactionReceipt({ hash: deployHash })).contractAddress!;
    await devnet.mint(wallet, 1_000_000n);
    const payment = await signedPayment(owner, {}, wallet);
    expect(createExactEvmScheme().preVerify(payment, requirements, now())).toMatchObject({
      ok: false,
      reason: ExactEvmReason.signature,
    });
    expect(
      createExactEvmScheme({ deferMismatchedSignaturesToFacilitator: true }).preVerify(
        payment,
        requirements,
        now(),
      ),
    ).toMatchObject({ ok: true, payer: wallet });
    expect(await facilitator.verify(payment, requirements)).toEqual({ isValid: true, payer: wallet });
    expect(await facilitator.settle(payment, requirements)).toMatchObject({ success: true, payer: wallet });
    expect(await devnet.balanceOf(wallet)).toBe(1_000_000n - 10_000n);
    // A signature by anyone but the owner is refused by the wallet.
    const forged = await signedPayment(payer(2), {}, wallet);
    expect(await facilitator.verify(forged, requirements)).toEqual({
      isValid: false,
      invalidReason: ExactEvmReason.signature,
      invalidMessage: 'the payer wallet rejects the signature (ERC-1271)',
      payer: wallet,
    });
  });

  it('keeps settling after the node refuses a transaction (no nonce gap)', async () => {
    let refuseNext = true;
    const flaky = createExactEvmFacilitator({
      account: devnet.accounts.payTo.privateKey,
      chain: devnet.chain,
      transport: custom({
        async request({ method, params }) {
          if (method === 'eth_sendRawTransaction' && refuseNext) {
            refuseNext = false;
            throw Object.assign(new Error('insufficient funds for gas * price + value'), { code: -32000 });
          }
          return rpc(method, params);
        },
      }),
      pollingIntervalMs: 50,
      receiptTimeoutMs: 3_000,
    });
    const first = await flaky.settle(await buildPayment(payer(1), requirements), requirements);
    expect(first).toMatchObject({
      success: false,
      transaction: '',
      errorReason: ExactEvmReason.transactionFailed,
    });
    const second = await flaky.settle(await buildPayment(payer(1), requirements), requirements);
    expect(second).toMatchObject({ success: true });
  });

  it('signs again with a nonce read from the node when the node says the nonce is taken, sending one transfer', async () => {
    // Another sender used the account: this facilitator's count is behind.
    const other = devnet.clientFor(devnet.accounts.payTo.privateKey);
    const behind = createExactEvmFacilitator({
      account: devnet.accounts.payTo.privateKey,
      chain: devnet.chain,
      rpcUrl: devnet.rpcUrl,
      pollingIntervalMs: 50,
    });
    expect(await behind.settle(await buildPayment(payer(0), requirements), requirements)).toMatchObject({
      success: true,
    });
    const hash = await other.sendTransaction({ to: devnet.accounts.payTo.address, value: 0n });
    await other.waitForTransactionReceipt({ hash });
    const account = payer(0);
    const before = await devnet.balanceOf(account.address);
    const receipt = await behind.settle(await buildPayment(account, requirements), requirements);
    expect(receipt).toMatchObject({ success: true });
    expect(before - (await devnet.balanceOf(account.address))).toBe(10_000n);
  });

  it('settles through a viem wallet client given instead of an account', async () => {
    const fromWallet = createExactEvmFacilitator({
      walletClient: devnet.clientFor(devnet.accounts.deployer.privateKey),
    });
    const payment = await buildPayment(payer(0), requirements);
    expect(await fromWallet.settle(payment, requirements)).toMatchObject({ success: true });
    expect((await fromWallet.supported()).signers).toEqual({
      'eip155:*': [devnet.accounts.deployer.address],
    });
  });

  it('reports every invalid option at once', () => {
    expect(() =>
      createExactEvmFacilitator({ account: '0x12', rpcUrl: 'http://x', receiptTimeoutMs: -1 }),
    ).toThrow(
      expect.objectContaining({
        code: 'invalid_config',
        problems: [
          'account is not a valid private key',
          'rpcUrl/transport need a chain',
          'chain or networks is required',
          'receiptTimeoutMs must be a positive integer',
        ],
      }),
    );
  });

  it('lists its kinds and signer in supported()', async () => {
    expect(await facilitator.supported()).toEqual({
      kinds: [
        { x402Version: 2, scheme: 'exact', network: 'eip155:8453' },
        { x402Version: 1, scheme: 'exact', network: 'base' },
      ],
      extensions: [],
      signers: { 'eip155:*': [devnet.accounts.facilitator.address] },
    });
  });
});

describe('the payer a refusal names', () => {
  it.each<[string, unknown]>([
    ['no payload', undefined],
    ['a payload without authorization', { signature: `0x${'11'.repeat(65)}` }],
    ['a from that is no string', { signature: `0x${'11'.repeat(65)}`, authorization: { from: 123 } }],
  ])('is absent for %s (invalid_payload), at verify and settle', async (_label, raw) => {
    const payment = { ...(await buildPayment(payer(0), requirements)), payload: raw } as PaymentPayload;
    const message = expect.stringMatching(/^payload\./);
    expect(await facilitator.verify(payment, requirements)).toStrictEqual({
      isValid: false,
      invalidReason: ExactEvmReason.invalidPayload,
      invalidMessage: message,
    });
    expect(await facilitator.settle(payment, requirements)).toStrictEqual({
      success: false,
      errorReason: ExactEvmReason.invalidPayload,
      errorMessage: message,
      transaction: '',
      network: 'eip155:8453',
    });
  });

  it('is the from of an authorization of the wrong shape (invalid_payload), at verify and settle', async () => {
    const payment = tamper(await buildPayment(payer(0), requirements), { value: '-1' });
    const message = expect.stringMatching(/^payload\.authorization\.value: /);
    expect(await facilitator.verify(payment, requirements)).toStrictEqual({
      isValid: false,
      invalidReason: ExactEvmReason.invalidPayload,
      invalidMessage: message,
      payer: payer(0).address,
    });
    expect(await facilitator.settle(payment, requirements)).toStrictEqual({
      success: false,
      errorReason: ExactEvmReason.invalidPayload,
      errorMessage: message,
      payer: payer(0).address,
      transaction: '',
      network: 'eip155:8453',
    });
  });
});

describe('verifyExactEvmPayment on its own', () => {
  it('refuses a payment for another chain than its client serves, naming both', async () => {
    const account = payer(0);
    const elsewhere = { ...requirements, network: 'eip155:84532' };
    const payment = await buildPayment(account, elsewhere);
    expect(
      await verifyExactEvmPayment({ client: devnet.publicClient, payload: payment, requirements: elsewhere }),
    ).toEqual({
      isValid: false,
      invalidReason: ExactEvmReason.networkMismatch,
      invalidMessage: 'this facilitator settles on eip155:8453, not eip155:84532',
      payer: account.address,
    });
  });

  it("asks the chain for the token's code once, then trusts that it stays deployed", async () => {
    const codeOf: string[] = [];
    const client = createPublicClient({
      chain: devnet.chain,
      transport: custom({
        async request({ method, params }) {
          if (method === 'eth_getCode') codeOf.push(String((params as unknown[])[0]).toLowerCase());
          return rpc(method, params);
        },
      }),
    });
    const token = devnet.token.address.toLowerCase();
    for (const account of [payer(0), payer(1), payer(0)]) {
      const payment = await buildPayment(account, requirements);
      expect(await verifyExactEvmPayment({ client, payload: payment, requirements })).toEqual({
        isValid: true,
        payer: account.address,
      });
    }
    // Earlier tests of this file may already have seen the token deployed: once at most.
    expect(codeOf.filter((address) => address === token).length).toBeLessThanOrEqual(1);
  });

  it('verifies with a client that names no chain', async () => {
    const account = payer(0);
    const client = createPublicClient({ transport: http(devnet.rpcUrl) });
    const payment = await buildPayment(account, requirements);
    expect(await verifyExactEvmPayment({ client, payload: payment, requirements })).toEqual({
      isValid: true,
      payer: account.address,
    });
  });

  it('leaves the transfer unsimulated when told, so a payer without funds passes', async () => {
    const poor = privateKeyToAccount(generatePrivateKey());
    const payment = await buildPayment(poor, requirements);
    const input = { client: devnet.publicClient, payload: payment, requirements };
    expect(await verifyExactEvmPayment({ ...input, simulate: false })).toEqual({
      isValid: true,
      payer: poor.address,
    });
    expect(await verifyExactEvmPayment(input)).toMatchObject({
      isValid: false,
      invalidReason: ExactEvmReason.insufficientBalance,
    });
  });

  it('refuses an authorization whose from has a broken checksum at verify and settle, without throwing', async () => {
    const account = payer(0);
    const payment = await buildPayment(account, requirements);
    // Every letter's case swapped: still 20 bytes of hex, but no longer a valid checksummed address.
    const from = `0x${account.address.slice(2).replace(/[a-f]/gi, (c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()))}`;
    const broken = tamper(payment, { from });
    const message = expect.stringMatching(/^cannot hash the authorization: .*Address ".*" is invalid/s);
    expect(await facilitator.verify(broken, requirements)).toEqual({
      isValid: false,
      invalidReason: ExactEvmReason.signature,
      invalidMessage: message,
      payer: from,
    });
    expect(await facilitator.settle(broken, requirements)).toEqual({
      success: false,
      errorReason: ExactEvmReason.signature,
      errorMessage: message,
      payer: from,
      transaction: '',
      network: 'eip155:8453',
    });
  });

  it('refuses a payer contract that has no isValidSignature as a wallet that rejects the signature', async () => {
    // The token itself as payer: it has code, but no ERC-1271 function, and reverts the call.
    const payment = await signedPayment(payer(0), {}, devnet.token.address);
    expect(await facilitator.verify(payment, requirements)).toEqual({
      isValid: false,
      invalidReason: ExactEvmReason.signature,
      invalidMessage: 'the payer wallet rejects the signature (ERC-1271)',
      payer: devnet.token.address,
    });
  });

  it('diagnoses a token without EIP-3009 as eip3009_not_supported at verify and settle', async () => {
    const account = payer(0);
    // A contract that reverts every call.
    const plain = privateKeyToAccount(generatePrivateKey()).address;
    await devnet.testClient.setCode({ address: plain, bytecode: '0x60006000fd' });
    const reqs = { ...requirements, asset: plain };
    const payment = await buildPayment(account, reqs);
    const message = `${plain} has no authorizationState()`;
    expect(await facilitator.verify(payment, reqs)).toEqual({
      isValid: false,
      invalidReason: ExactEvmReason.eip3009NotSupported,
      invalidMessage: message,
      payer: account.address,
    });
    expect(await facilitator.settle(payment, reqs)).toMatchObject({
      success: false,
      errorReason: ExactEvmReason.eip3009NotSupported,
      errorMessage: message,
      transaction: '',
    });
  });

  it("answers a revert the token does not explain with the node's words, even when the balance is exactly the price", async () => {
    // A transfer to the zero address: signature, nonce, domain and balance are all fine, and the
    // token still reverts (ERC20InvalidReceiver).
    const account = privateKeyToAccount(generatePrivateKey());
    await devnet.mint(account.address, 10_000n);
    const reqs = { ...requirements, payTo: zeroAddress };
    const payment = await buildPayment(account, reqs);
    expect(await facilitator.verify(payment, reqs)).toEqual({
      isValid: false,
      invalidReason: ExactEvmReason.simulationFailed,
      invalidMessage: expect.stringMatching(/^The contract function "transferWithAuthorization" reverted/),
      payer: account.address,
    });
    const receipt = await facilitator.settle(payment, reqs);
    expect(receipt).toEqual({
      success: false,
      errorReason: ExactEvmReason.transactionFailed,
      errorMessage: expect.stringContaining('transferWithAuthorization'),
      payer: account.address,
      transaction: '',
      network: 'eip155:8453',
    });
    // viem's whole error (contract call, arguments, docs) is cut to 500 characters for the client.
    expect(receipt.errorMessage).toHaveLength(500);
    expect(await devnet.balanceOf(account.address)).toBe(10_000n);
  });

  it.each([
    ["the payer wallet's isValidSignature", 'isValidSignature(bytes32,bytes)', 'wallet'],
    ['the simulated transfer', TRANSFER_VRS, 'payer'],
    ["the diagnosis' authorizationState", 'authorizationState(address,bytes32)', 'poor'],
  ] as const)(
    'throws a network FacilitatorError when the node does not answer %s',
    async (_label, fn, who) => {
      // The call is reached by an owner's signature for a smart wallet, by any good payment, and by
      // a payment the simulation refuses (a payer without funds) respectively.
      const owner = payer(1);
      const payment =
        who === 'wallet'
          ? await signedPayment(owner, {}, await deployWallet(owner.address))
          : await buildPayment(
              who === 'poor' ? privateKeyToAccount(generatePrivateKey()) : owner,
              requirements,
            );
      const { client, dropped } = droppingClient(fn);
      const verdict = verifyExactEvmPayment({ client, payload: payment, requirements });
      await expect(verdict).rejects.toBeInstanceOf(FacilitatorError);
      await expect(verdict).rejects.toMatchObject({ kind: 'network', operation: 'verify' });
      expect(dropped()).toBe(1);
    },
  );

  it("throws a network FacilitatorError of settle when the node does not answer the wallet's isValidSignature there", async () => {
    const owner = payer(1);
    const payment = await signedPayment(owner, {}, await deployWallet(owner.address));
    const { client, dropped } = droppingClient('isValidSignature(bytes32,bytes)');
    const receipt = settleExactEvmPayment({ client, payload: payment, requirements });
    await expect(receipt).rejects.toBeInstanceOf(FacilitatorError);
    await expect(receipt).rejects.toMatchObject({ kind: 'network', operation: 'settle' });
    expect(dropped()).toBe(1);
  });

  it('lets an error the node answers through as it is, at verify and settle (only no answer is a network failure)', async () => {
    // A signature that does not recover to the payer: the payer's code is read next.
    const payment = tamper(await buildPayment(payer(1), requirements), { value: '1' });
    const reqs = { ...requirements, amount: '1' };
    const client = interceptingClient((method) => {
      if (method === 'eth_getCode')
        throw Object.assign(new Error('the method eth_getCode does not exist/is not available'), {
          code: -32601,
        });
    });
    const verdict = verifyExactEvmPayment({ client, payload: payment, requirements: reqs });
    await expect(verdict).rejects.toBeInstanceOf(MethodNotFoundRpcError);
    const receipt = settleExactEvmPayment({ client, payload: payment, requirements: reqs });
    await expect(receipt).rejects.toBeInstanceOf(MethodNotFoundRpcError);
  });
});

describe('ERC-6492 and smart-wallet signatures', () => {
  const MAGIC = '6492649264926492649264926492649264926492649264926492649264926492';

  it.each<[string, (sig: Hex) => Hex, string, string]>([
    [
      'wrapped with a factory (a wallet not deployed yet)',
      (signature) => serializeErc6492Signature({ address: FACTORY, data: '0xdeadbeef', signature }),
      ExactEvmReason.factoryNotAllowed,
      'undeployed ERC-6492 wallets are not supported',
    ],
    [
      'wrapped with the zero address as factory',
      (signature) => serializeErc6492Signature({ address: zeroAddress, data: '0xdeadbeef', signature }),
      ExactEvmReason.signature,
      'signature does not match the payer',
    ],
    [
      'of 97 bytes without a wrapper',
      () => `0x${'ab'.repeat(97)}`,
      ExactEvmReason.signature,
      'signature does not match the payer',
    ],
    [
      'of 65 bytes that end like an ERC-6492 wrapper',
      () => `0x${'11'.repeat(33)}${MAGIC}`,
      ExactEvmReason.signature,
      'signature does not match the payer',
    ],
  ])(
    'refuses a signature %s from an address without code, at verify and settle',
    async (_label, wrap, reason, message) => {
      const from = privateKeyToAccount(generatePrivateKey()).address;
      const signed = await signedPayment(payer(1), {}, from);
      const payload = signed.payload as { signature: Hex };
      const payment = { ...signed, payload: { ...payload, signature: wrap(payload.signature) } };
      expect(await facilitator.verify(payment, requirements)).toEqual({
        isValid: false,
        invalidReason: reason,
        invalidMessage: message,
        payer: from,
      });
      expect(await facilitator.settle(payment, requirements)).toMatchObject({
        success: false,
        errorReason: reason,
        errorMessage: message,
        payer: from,
        transaction: '',
      });
    },
  );

  it('unwraps an ERC-6492 signature of a wallet that is deployed already, and settles it', async () => {
    const owner = payer(1);
    const wallet = await deployWallet(owner.address);
    await devnet.mint(wallet, 10_000n);
    const signed = await signedPayment(owner, {}, wallet);
    const payload = signed.payload as { signature: Hex };
    const signature = serializeErc6492Signature({
      address: FACTORY,
      data: '0xdeadbeef',
      signature: payload.signature,
    });
    const payment = { ...signed, payload: { ...payload, signature } };
    expect(await facilitator.verify(payment, requirements)).toEqual({ isValid: true, payer: wallet });
    expect(await facilitator.settle(payment, requirements)).toMatchObject({ success: true, payer: wallet });
    expect(await devnet.balanceOf(wallet)).toBe(0n);
  });

  it('settles a smart-wallet signature that is not 65 bytes through the bytes form of transferWithAuthorization', async () => {
    // A wallet whose isValidSignature accepts any signature (its own format is its business).
    const wallet = privateKeyToAccount(generatePrivateKey()).address;
    await devnet.testClient.setCode({ address: wallet, bytecode: '0x631626ba7e60e01b60005260206000f3' });
    await devnet.mint(wallet, 10_000n);
    const signed = await signedPayment(payer(1), {}, wallet);
    const payment = {
      ...signed,
      payload: { ...(signed.payload as object), signature: `0x${'ab'.repeat(97)}` },
    };
    expect(await facilitator.verify(payment, requirements)).toEqual({ isValid: true, payer: wallet });
    const receipt = await facilitator.settle(payment, requirements);
    expect(receipt).toMatchObject({ success: true, payer: wallet, amount: '10000' });
    const tx = await devnet.publicClient.getTransaction({ hash: receipt.transaction as Hex });
    expect(tx.input.slice(0, 10)).toBe(toFunctionSelector(TRANSFER_BYTES));
    expect(await devnet.balanceOf(wallet)).toBe(0n);
  });
});

const FACTORY = '0x00000000000000000000000000000000000fac70' as const;
const TRANSFER_VRS =
  'transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)';
const TRANSFER_BYTES = 'transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)';

/** Deploys a TestERC1271Wallet owned by `owner`; resolves with its address. */
async function deployWallet(owner: Hex): Promise<Hex> {
  const deployer = devnet.clientFor(devnet.accounts.deployer.privateKey);
  const hash = await deployer.deployContract({
    abi: testErc1271WalletAbi,
    bytecode: testErc1271WalletBytecode,
    args: [owner],
  });
  return (await deployer.waitForTransactionReceipt({ hash })).contractAddress!;
}

/**
 * A wallet client on the devnet (an account of its own, never funded: it sends nothing) whose
 * requests go through `intercept` first, which may throw in place of the node's answer.
 */
function interceptingClient(intercept: (method: string, params: unknown) => void) {
  return createWalletClient({
    account: privateKeyToAccount(generatePrivateKey()),
    chain: devnet.chain,
    transport: custom(
      {
        async request({ method, params }) {
          intercept(method, params);
          return rpc(method, params);
        },
      },
      { retryCount: 0 },
    ),
  });
}

/**
 * A client whose node gives no answer (an HTTP failure, as a dropped connection) to every eth_call
 * of the function `signature`, and answers everything else; counts what it dropped.
 */
function droppingClient(signature: string) {
  const selector = toFunctionSelector(signature);
  let dropped = 0;
  const client = interceptingClient((method, params) => {
    const call = (params as [{ data?: string; input?: string }] | undefined)?.[0];
    if (method === 'eth_call' && (call?.data ?? call?.input ?? '').startsWith(selector)) {
      dropped++;
      throw new HttpRequestError({ url: devnet.rpcUrl, details: 'socket hang up' });
    }
  });
  return { client, dropped: () => dropped };
}

/** A v2 payment with chosen authorization fields, signed correctly. */
async function signedPayment(
  account: ReturnType<typeof payer>,
  overrides: Partial<Record<'validAfter' | 'validBefore', string>>,
  from: `0x${string}` = account.address,
): Promise<PaymentPayload> {
  const authorization = {
    from,
    to: requirements.payTo as `0x${string}`,
    value: requirements.amount,
    validAfter: '0',
    validBefore: String(now() + 60),
    nonce: createAuthorizationNonce(),
    ...overrides,
  };
  const signature = await signTransferAuthorization({
    account,
    domain: {
      name: 'USD Coin',
      version: '2',
      chainId: 8453,
      verifyingContract: requirements.asset as `0x${string}`,
    },
    authorization,
  });
  return {
    x402Version: 2,
    resource: { url: 'https://api.example.com/paid' },
    accepted: requirements,
    payload: { signature, authorization },
  };
}
