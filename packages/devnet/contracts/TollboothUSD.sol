// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {IERC5267} from "@openzeppelin/contracts/interfaces/IERC5267.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";
import {SignatureChecker} from "@openzeppelin/contracts/utils/cryptography/SignatureChecker.sol";

/// @title TollboothUSD — a USDC-like EIP-3009 token for local x402 payments.
/// @notice 6 decimals, EIP-712 domain {name, version, chainId, verifyingContract} like Circle's
/// FiatTokenV2_2, and Circle's revert strings, because the official x402 facilitator classifies
/// failures by those strings.
/// @dev Everything that defines the token (name, symbol, EIP-712 version, owner) lives in storage and
/// the domain separator is computed on every use from storage, `address(this)` and `block.chainid`.
/// The runtime code has no immutables, so it can be copied to any address (the canonical USDC
/// address on a devnet) with `anvil_setCode` and set up there with `initialize`.
contract TollboothUSD is ERC20, Ownable, IERC5267 {
    bytes32 private constant EIP712_DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");

    bytes32 public constant TRANSFER_WITH_AUTHORIZATION_TYPEHASH =
        keccak256(
            "TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
        );

    bytes32 public constant RECEIVE_WITH_AUTHORIZATION_TYPEHASH =
        keccak256(
            "ReceiveWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
        );

    bytes32 public constant CANCEL_AUTHORIZATION_TYPEHASH =
        keccak256("CancelAuthorization(address authorizer,bytes32 nonce)");

    string private _tokenName;
    string private _tokenSymbol;
    string private _eip712Version;
    bool private _initialized;
    mapping(address minter => bool) public minters;
    mapping(address authorizer => mapping(bytes32 nonce => bool)) private _authorizationStates;

    event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce);
    event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce);
    event MinterConfigured(address indexed minter, bool allowed);

    constructor(
        string memory name_,
        string memory symbol_,
        string memory version_,
        address owner_
    ) ERC20("", "") Ownable(owner_) {
        _initialize(name_, symbol_, version_, owner_);
    }

    /// @notice Sets up a copy of this code placed at another address with `anvil_setCode`, whose
    /// storage starts empty. Callable once per address.
    function initialize(
        string calldata name_,
        string calldata symbol_,
        string calldata version_,
        address owner_
    ) external {
        _initialize(name_, symbol_, version_, owner_);
    }

    function _initialize(
        string memory name_,
        string memory symbol_,
        string memory version_,
        address owner_
    ) private {
        require(!_initialized, "FiatToken: contract is already initialized");
        require(owner_ != address(0), "FiatToken: new owner is the zero address");
        _initialized = true;
        _tokenName = name_;
        _tokenSymbol = symbol_;
        _eip712Version = version_;
        _transferOwnership(owner_);
    }

    // ---------------------------------------------------------------- ERC-20 metadata

    function name() public view override returns (string memory) {
        return _tokenName;
    }

    function symbol() public view override returns (string memory) {
        return _tokenSymbol;
    }

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    /// @notice The EIP-712 domain version ("2" for USDC).
    function version() external view returns (string memory) {
        return _eip712Version;
    }

    // ---------------------------------------------------------------- minting

    modifier onlyMinters() {
        require(minters[msg.sender] || msg.sender == owner(), "FiatToken: caller is not a minter");
        _;
    }

    function configureMinter(address minter, bool allowed) external onlyOwner {
        minters[minter] = allowed;
        emit MinterConfigured(minter, allowed);
    }

    function mint(address to, uint256 amount) external onlyMinters returns (bool) {
        require(to != address(0), "FiatToken: mint to the zero address");
        require(amount > 0, "FiatToken: mint amount not greater than 0");
        _mint(to, amount);
        return true;
    }

    function burn(uint256 amount) external {
        require(amount > 0, "FiatToken: burn amount not greater than 0");
        require(balanceOf(msg.sender) >= amount, "FiatToken: burn amount exceeds balance");
        _burn(msg.sender, amount);
    }

    /// @dev Circle's wording for the balance and zero-address failures instead of OpenZeppelin's
    /// custom errors: the x402 facilitator matches "transfer amount exceeds balance".
    function _update(address from, address to, uint256 value) internal override {
        if (from != address(0) && to != address(0)) {
            require(value <= balanceOf(from), "ERC20: transfer amount exceeds balance");
        }
        super._update(from, to, value);
    }

    // ---------------------------------------------------------------- EIP-712

    function DOMAIN_SEPARATOR() external view returns (bytes32) {
        return _domainSeparator();
    }

    function _domainSeparator() private view returns (bytes32) {
        return
            keccak256(
                abi.encode(
                    EIP712_DOMAIN_TYPEHASH,
                    keccak256(bytes(_tokenName)),
                    keccak256(bytes(_eip712Version)),
                    block.chainid,
                    address(this)
                )
            );
    }

    /// @inheritdoc IERC5267
    function eip712Domain()
        external
        view
        returns (
            bytes1 fields,
            string memory name_,
            string memory version_,
            uint256 chainId,
            address verifyingContract,
            bytes32 salt,
            uint256[] memory extensions
        )
    {
        return (hex"0f", _tokenName, _eip712Version, block.chainid, address(this), bytes32(0), new uint256[](0));
    }

    // ---------------------------------------------------------------- EIP-3009

    function authorizationState(address authorizer, bytes32 nonce) external view returns (bool) {
        return _authorizationStates[authorizer][nonce];
    }

    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        _transferWithAuthorization(from, to, value, validAfter, validBefore, nonce, abi.encodePacked(r, s, v));
    }

    /// @notice The `bytes signature` form: ECDSA for EOAs, ERC-1271 for contract wallets.
    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external {
        _transferWithAuthorization(from, to, value, validAfter, validBefore, nonce, signature);
    }

    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        _receiveWithAuthorization(from, to, value, validAfter, validBefore, nonce, abi.encodePacked(r, s, v));
    }

    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external {
        _receiveWithAuthorization(from, to, value, validAfter, validBefore, nonce, signature);
    }

    function cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s) external {
        _cancelAuthorization(authorizer, nonce, abi.encodePacked(r, s, v));
    }

    function cancelAuthorization(address authorizer, bytes32 nonce, bytes memory signature) external {
        _cancelAuthorization(authorizer, nonce, signature);
    }

    function _transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) private {
        _requireValidAuthorization(from, nonce, validAfter, validBefore);
        _requireValidSignature(
            from,
            keccak256(abi.encode(TRANSFER_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce)),
            signature
        );
        _markAuthorizationAsUsed(from, nonce);
        _transfer(from, to, value);
    }

    function _receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) private {
        require(to == msg.sender, "FiatTokenV2: caller must be the payee");
        _requireValidAuthorization(from, nonce, validAfter, validBefore);
        _requireValidSignature(
            from,
            keccak256(abi.encode(RECEIVE_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce)),
            signature
        );
        _markAuthorizationAsUsed(from, nonce);
        _transfer(from, to, value);
    }

    function _cancelAuthorization(address authorizer, bytes32 nonce, bytes memory signature) private {
        _requireUnusedAuthorization(authorizer, nonce);
        _requireValidSignature(
            authorizer,
            keccak256(abi.encode(CANCEL_AUTHORIZATION_TYPEHASH, authorizer, nonce)),
            signature
        );
        _authorizationStates[authorizer][nonce] = true;
        emit AuthorizationCanceled(authorizer, nonce);
    }

    function _requireValidSignature(address signer, bytes32 structHash, bytes memory signature) private view {
        require(
            SignatureChecker.isValidSignatureNow(
                signer,
                MessageHashUtils.toTypedDataHash(_domainSeparator(), structHash),
                signature
            ),
            "FiatTokenV2: invalid signature"
        );
    }

    function _requireUnusedAuthorization(address authorizer, bytes32 nonce) private view {
        require(!_authorizationStates[authorizer][nonce], "FiatTokenV2: authorization is used or canceled");
    }

    /// @dev Same bounds as Circle: strictly after `validAfter`, strictly before `validBefore`.
    function _requireValidAuthorization(
        address authorizer,
        bytes32 nonce,
        uint256 validAfter,
        uint256 validBefore
    ) private view {
        require(block.timestamp > validAfter, "FiatTokenV2: authorization is not yet valid");
        require(block.timestamp < validBefore, "FiatTokenV2: authorization is expired");
        _requireUnusedAuthorization(authorizer, nonce);
    }

    function _markAuthorizationAsUsed(address authorizer, bytes32 nonce) private {
        _authorizationStates[authorizer][nonce] = true;
        emit AuthorizationUsed(authorizer, nonce);
    }
}
