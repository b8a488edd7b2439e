export { anvilAccount, type DevnetAccount } from './accounts';
export { ANVIL_PACKAGE, resolveAnvilPath } from './anvil';
export { CIRCLE_PACKAGE } from './circle-token';
export { ANVIL_MNEMONIC, CANONICAL_USDC, MULTICALL3_ADDRESS } from './constants';
export { DEVNET_ERROR_CODES, DevnetError, type DevnetErrorCode } from './errors';
export {
  multicall3Abi,
  testErc1271WalletAbi,
  testErc1271WalletBytecode,
  tollboothUsdAbi,
  tollboothUsdBytecode,
  tollboothUsdDeployedBytecode,
} from './generated/artifacts';
export {
  DEVNET_DEFAULTS,
  type Devnet,
  type DevnetPublicClient,
  type DevnetTestClient,
  type DevnetToken,
  type DevnetTokenKind,
  type DevnetWalletClient,
  type StartDevnetOptions,
  startDevnet,
} from './start-devnet';
