// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title Multicall3 (subset) — the read helpers viem and the x402 facilitator call on a devnet.
/// @notice Same ABI as the canonical Multicall3 at 0xcA11bde05977b3631167028862bE2a173976CA11 for
/// `aggregate`, `tryAggregate`, `aggregate3` and the block getters; installed there with
/// `anvil_setCode`. No constructor and no storage, so the runtime code works at any address.
contract Multicall3 {
    struct Call {
        address target;
        bytes callData;
    }

    struct Call3 {
        address target;
        bool allowFailure;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    function aggregate(Call[] calldata calls) public payable returns (uint256 blockNumber, bytes[] memory returnData) {
        blockNumber = block.number;
        returnData = new bytes[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            (bool success, bytes memory ret) = calls[i].target.call(calls[i].callData);
            require(success, "Multicall3: call failed");
            returnData[i] = ret;
        }
    }

    function tryAggregate(bool requireSuccess, Call[] calldata calls) public payable returns (Result[] memory returnData) {
        returnData = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            (bool success, bytes memory ret) = calls[i].target.call(calls[i].callData);
            if (requireSuccess) require(success, "Multicall3: call failed");
            returnData[i] = Result(success, ret);
        }
    }

    function aggregate3(Call3[] calldata calls) public payable returns (Result[] memory returnData) {
        returnData = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            (bool success, bytes memory ret) = calls[i].target.call(calls[i].callData);
            require(success || calls[i].allowFailure, "Multicall3: call failed");
            returnData[i] = Result(success, ret);
        }
    }

    function getBlockNumber() public view returns (uint256) {
        return block.number;
    }

    function getCurrentBlockTimestamp() public view returns (uint256) {
        return block.timestamp;
    }

    function getChainId() public view returns (uint256) {
        return block.chainid;
    }

    function getEthBalance(address addr) public view returns (uint256) {
        return addr.balance;
    }
}
