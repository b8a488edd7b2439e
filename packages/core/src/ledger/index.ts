export * from './settlement-ledger';
export * from './types';
