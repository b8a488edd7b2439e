export * from './header-list';
export * from './paid-response';
export type * from './types';
