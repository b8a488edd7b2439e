// The fee service's configuration: the environment's variables one by one (schema.ts), the checks
// across them (checks.ts), and loadConfig, which reads, validates and shapes them (load.ts).

export type { FacilitatorAuth } from './facilitator-auth';
export { historyUrlBesideLedger } from './history-url';
export { ConfigError, loadConfig, type ServiceConfig } from './load';
export { CONFIG_DEFAULTS, type Framework, KNOWN_USDC, type Profile, type UpstreamKind } from './schema';
