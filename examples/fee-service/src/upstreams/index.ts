export * from './bitcoin-core';
export * from './circuit-breaker';
export * from './errors';
export * from './esplora';
export * from './http';
export * from './mempool-space';
export * from './wire';
