export * from './header-list';
export * from './known-text';
export * from './paid-response';
export type * from './types';
