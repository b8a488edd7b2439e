export * from './compile-routes';
export * from './normalize-path';
export type * from './types';
