export * from './check-facilitator-support';
export * from './facilitator-error';
export * from './http-facilitator-client';
export type * from './types';
