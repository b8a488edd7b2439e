export * from './chain';
export * from './constants';
export * from './derived';
export * from './errors';
export * from './fee-math';
export * from './schemas';
export * from './send-wait';
export * from './types';
