export * from './create-payment-gate';
export * from './match-requirements';
export type * from './types';
