// A smart-wallet payer signs in (docs/sign-in-with-x.md): the devnet's ERC-1271 contract wallet
// pays a route through Tollbooth (its owner signs the EIP-3009 authorization, the facilitator checks
// it with the wallet's isValidSignature), then comes back by signing the EIP-4361 message with the
// owner's key, which the gate checks through the chain reader (viem's verifyMessage: EIP-1271).
import { createMemoryLedgerStore, decodeHeaderJson } from '@tollbooth/core';
import { type Devnet, startDevnet, testErc1271WalletAbi, testErc1271WalletBytecode } from '@tollbooth/devnet';
import { createEvmPaymentSigner, createPayingClient } from '@tollbooth/fetch';
import type { Address } from 'viem';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  challengeOf,
  devnetFacilitator,
  errorCodeOf,
  type Listening,
  observed,
  PRICE,
  paidRoute,
  payerAccount,
} from './support/interop-harness';
import { officialProof, startSignInServer } from './support/sign-in-servers';

let devnet: Devnet;
let app: Listening;
let facilitator: ReturnType<typeof observed>;
let wallet: Address;

beforeAll(async () => {
  devnet = await startDevnet({ chainId: 8453, payers: 3 });
  const owner = payerAccount(devnet, 0);
  const deployer = devnet.clientFor(devnet.accounts.deployer.privateKey);
  const hash = await deployer.deployContract({
    abi: testErc1271WalletAbi,
    bytecode: testErc1271WalletBytecode,
    args: [owner.address],
  });
  wallet = (await devnet.publicClient.waitForTransactionReceipt({ hash })).contractAddress!;
  await devnet.mint(wallet, 10n * PRICE);
  facilitator = observed(devnetFacilitator(devnet));
  app = await startSignInServer('express', devnet, {
    facilitator,
    ledger: createMemoryLedgerStore(),
    // The owner's signature does not recover to the wallet: the facilitator checks it on chain.
    scheme: { deferMismatchedSignaturesToFacilitator: true },
    routes: { 'GET /pass': { ...paidRoute(devnet), signIn: { passSeconds: 600 } } },
  });
});
afterAll(async () => {
  await app?.close();
  await devnet?.stop();
});

/** The wallet as an account: its address, its owner's signatures. */
function walletAccount() {
  const owner = payerAccount(devnet, 0);
  return {
    address: wallet,
    signTypedData: owner.signTypedData,
    signMessage: owner.signMessage,
  } as unknown as typeof owner;
}

it('pays once as an ERC-1271 wallet, then signs in with its owner key three times', async () => {
  const client = createPayingClient({
    signer: createEvmPaymentSigner({ account: walletAccount() }),
    maxAmountPerPayment: PRICE,
  });
  const paid = await client.pay(`${app.url}/pass`);
  expect(paid.response.status).toBe(200);
  expect(paid.receipt).toMatchObject({ success: true, payer: wallet });
  for (let i = 0; i < 3; i++) {
    const again = await client.pay(`${app.url}/pass`);
    expect(again.response.status, `sign-in ${i + 1}`).toBe(200);
    expect(again.signedIn).toBe(true);
  }
  expect(facilitator.settles).toBe(1);
  expect(await devnet.balanceOf(wallet)).toBe(9n * PRICE);
});

it("signs in with the official client's proof for the wallet; another key's signature is refused", async () => {
  const challenge = challengeOf(await fetch(`${app.url}/pass`));
  const proof = await officialProof(challenge, walletAccount(), `${app.url}/pass`);
  expect((await fetch(`${app.url}/pass`, { headers: { 'SIGN-IN-WITH-X': proof } })).status).toBe(200);

  // The wallet's address, signed by a key that does not own it: isValidSignature says no.
  const stranger = payerAccount(devnet, 1);
  const next = challengeOf(await fetch(`${app.url}/pass`));
  const forged = await officialProof(
    next,
    { ...stranger, address: wallet } as unknown as typeof stranger,
    `${app.url}/pass`,
  );
  const refused = await fetch(`${app.url}/pass`, { headers: { 'SIGN-IN-WITH-X': forged } });
  expect(refused.status).toBe(402);
  expect(await errorCodeOf(refused)).toBe('sign_in_signature_invalid');
  expect((decodeHeaderJson(forged) as { address: string }).address).toBe(wallet);
});
