export { anvilAccount, type DevnetAccount } from './accounts';
export { ANVIL_PACKAGE, resolveAnvilPath } from './anvil';
export { CIRCLE_PACKAGE } from './circle-token';
export { ANVIL_MNEMONIC, CANONICAL_USDC, MULTICALL3_ADDRESS } from './constants';
export type {
  Devnet,
  DevnetPublicClient,
  DevnetTestClient,
  DevnetToken,
  DevnetWalletClient,
} from './devnet';
export { DEVNET_DEFAULTS, type DevnetTokenKind, type StartDevnetOptions } from './devnet-options';
export { DEVNET_ERROR_CODES, DevnetError, type DevnetErrorCode } from './errors';
export {
  multicall3Abi,
  testErc1271WalletAbi,
  testErc1271WalletBytecode,
  tollboothUsdAbi,
  tollboothUsdBytecode,
  tollboothUsdDeployedBytecode,
} from './generated/artifacts';
export { startDevnet } from './start-devnet';
