// @tollbooth/core: the x402 v2 protocol model and the framework-neutral payment gate.
// Each area keeps its own barrel; this file only re-exports them.

export * from './config/index';
export * from './discovery/index';
export * from './errors/index';
export * from './facilitator/index';
export * from './gate/index';
export * from './ledger/index';
export * from './ledger/memory/index';
export * from './node/index';
export * from './paywall/index';
export * from './protocol/index';
export * from './routes/index';
export * from './scheme';
