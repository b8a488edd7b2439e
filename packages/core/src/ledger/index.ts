export * from './invariant';
export * from './ledger-row';
export * from './settlement-ledger';
export * from './types';
