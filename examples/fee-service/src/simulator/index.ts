export * from './model';
export * from './prng';
export * from './scenarios';
export * from './server';
export { blockWithExtras, checkRawTransaction, esploraBlock, esploraTx } from './views';
