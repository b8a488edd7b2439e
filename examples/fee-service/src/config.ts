import { hostname } from 'node:os';
import type * as z from 'zod';
import { historyUrlBesideLedger } from './capabilities/history/urls';
import {
  CAIP2_EVM,
  EnvSchema,
  type Framework,
  HEADER_LINE,
  type LOG_LEVELS,
  type Profile,
  UPSTREAMS,
  type UpstreamKind,
} from './config-schema';
import type { CorsOrigins } from './http/cors';
import type { SCENARIO_NAMES } from './simulator/scenarios';
import type { FacilitatorAuth } from './startup/facilitator-auth';

export type { Framework, Profile, UpstreamKind } from './config-schema';

/**
 * The fee service's configuration, read from environment variables and validated with zod at
 * start-up. Every problem is reported at once (one {@link ConfigError} listing them all).
 */

/** Canonical USDC of the networks the service knows without an explicit `ASSET`. */
export const KNOWN_USDC: Readonly<Record<string, { asset: string; name: string; version: string }>> = {
  'eip155:8453': { asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', name: 'USD Coin', version: '2' },
  'eip155:84532': { asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', name: 'USDC', version: '2' },
};

/** Defaults of every variable (documented in the README's configuration table). */
export const CONFIG_DEFAULTS = {
  PORT: 3000,
  HOST: '127.0.0.1',
  FRAMEWORK: 'fastify',
  PROFILE: 'local',
  UPSTREAM: 'mempool',
  SIMULATOR_SCENARIO: 'calm',
  SIMULATOR_SEED: 42,
  SIMULATOR_TIME_SCALE: 1,
  SNAPSHOT_INTERVAL_MS: 10_000,
  OBSERVATORY_ENABLED: true,
  OBSERVATORY_INTERVAL_MS: 60_000,
  OBSERVATORY_RETENTION_HOURS: 720,
  SIMULATOR_HISTORY_HOURS: 36,
  FACILITATOR_NAME: 'tollbooth',
  FACILITATOR_TIMEOUT_MS: 10_000,
  FACILITATOR_SETTLE_TIMEOUT_MS: 30_000,
  NETWORK: 'eip155:8453',
  LEDGER_URL: 'sqlite:.tollbooth/ledger.sqlite',
  RATE_LIMIT_ENABLED: true,
  RATE_LIMIT_MAX: 60,
  RATE_LIMIT_WINDOW_MS: 60_000,
  RATE_LIMIT_PREFIX: 'fee-service:rl:',
  TRUST_PROXY: false,
  CORS_ORIGINS: '*',
  LOG_LEVEL: 'info',
  SHUTDOWN_TIMEOUT_MS: 30_000,
  BROADCAST_MAX_FEE_RATE: 1_000,
  X402_DEMO_RATE_LIMIT_MAX: 10,
  X402_DEMO_RATE_LIMIT_WINDOW_MS: 60_000,
  AI_RATE_LIMIT_MAX: 30,
  AI_RATE_LIMIT_WINDOW_MS: 60_000,
  AI_MODEL_TIMEOUT_MS: 8_000,
  AI_ANALYST_BUDGET_MS: 5_000,
} as const;

/** The validated configuration of one fee-service process. */
export interface ServiceConfig {
  port: number;
  host: string;
  /** Canonical base URL; undefined = `http://<host>:<port>` once listening. */
  publicBaseUrl: string | undefined;
  framework: Framework;
  profile: Profile;
  upstream: {
    /** The dialect the fee snapshots come from. */
    kind: UpstreamKind;
    /** Undefined = the embedded simulator serves this dialect. */
    url: string | undefined;
    coreUser: string | undefined;
    corePassword: string | undefined;
  };
  /**
   * Every configured upstream URL. The landscape, the next block and the broadcast use all of them;
   * with none configured the embedded simulator serves all three dialects.
   */
  sources: { mempool: string | undefined; esplora: string | undefined; core: string | undefined };
  broadcast: {
    /** Fee rate above which a broadcast is refused unless the body says `allow_high_fee`, sat/vB. */
    maxFeeRateSatVb: number;
  };
  /** The free x402 demo's own rate limit (it calls the facilitator's /verify for free). */
  x402Demo: { rateLimitMax: number; rateLimitWindowMs: number };
  /** The AI resources: their shared rate limit and the optional OpenAI-compatible model. */
  ai: {
    rateLimitMax: number;
    rateLimitWindowMs: number;
    /** Wall-clock budget of one analyst request's steps (`AI_ANALYST_BUDGET_MS`). */
    analystBudgetMs: number;
    /** Undefined = no model: every AI answer is deterministic. */
    model: { baseUrl: string; name: string; apiKey: string | undefined; timeoutMs: number } | undefined;
  };
  simulator: {
    scenario: (typeof SCENARIO_NAMES)[number];
    seed: number;
    timeScale: number;
    /** Hours of chain the embedded simulator runs forward at start-up for the observatory (0: none). */
    historyHours: number;
  };
  snapshotIntervalMs: number;
  observatory: {
    /** Off: no recorder, and the observatory's resources are published paused. */
    enabled: boolean;
    /** Where the history is kept: `sqlite:<file>` (default beside a SQLite ledger) or `postgres://…`. */
    historyUrl: string;
    /** Recorder poll period. */
    intervalMs: number;
    /** History kept, hours. */
    retentionHours: number;
  };
  facilitator: {
    /** Undefined = the in-process devnet facilitator. */
    url: string | undefined;
    name: string;
    timeoutMs: number;
    settleTimeoutMs: number;
    /** How the service authenticates to an external facilitator; undefined = it does not. */
    auth: FacilitatorAuth | undefined;
  };
  /**
   * The chain reader of each paid network (JSON-RPC URL by CAIP-2 network): it judges uncertain
   * settlements (`authorizationState`, the settlement's receipt) and confirms reported ones.
   * `RPC_URL` serves `NETWORK`. Empty with the embedded devnet (its own node is the reader) and
   * when an external facilitator runs without one (then only the facilitator's word counts).
   */
  chainReaders: Readonly<Record<string, string>>;
  /**
   * This instance's name in ledger owners. A restarted instance with the same name resumes its own
   * unfinished entries at once; two instances running together must have different names.
   * `INSTANCE_ID`, else `<host name>-<PORT>` (random when PORT is 0).
   */
  instanceId: string | undefined;
  payment: {
    /** Undefined = the devnet's payTo account (only without FACILITATOR_URL). */
    payTo: string | undefined;
    network: string;
    asset: string;
    assetName: string;
    assetVersion: string;
  };
  ledgerUrl: string;
  rateLimit: {
    enabled: boolean;
    max: number;
    windowMs: number;
    redisUrl: string | undefined;
    prefix: string;
  };
  trustProxy: boolean;
  /**
   * Which browser origins may read the answers (`CORS_ORIGINS`): `*` (default; payments travel in
   * headers, never cookies, so no credentials are allowed) or exact origins.
   */
  cors: { origins: CorsOrigins };
  /**
   * Where `/metrics` is served. `port` (`METRICS_PORT`): a listener of its own on `host`
   * (`METRICS_HOST`, default `HOST`: a private interface a scraper reaches), and the
   * main port answers 404 there; `token` (`METRICS_TOKEN`): a bearer token every scrape must send.
   * Neither: open on the main port, refused in the production profile with `FACILITATOR_URL` (as
   * `RPC_URL` is: wherever real money flows).
   */
  metrics: { port: number | undefined; host: string; token: string | undefined };
  logLevel: (typeof LOG_LEVELS)[number];
  shutdownTimeoutMs: number;
}

/** Thrown by {@link loadConfig} with every problem of the environment. */
export class ConfigError extends Error {
  readonly code = 'invalid_config';
  constructor(readonly problems: readonly string[]) {
    super(`invalid fee-service configuration:\n- ${problems.join('\n- ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Reads and validates the configuration from `env` (default `process.env`). Empty variables count
 * as unset.
 * @throws ConfigError listing every problem at once
 * @example const config = loadConfig({ PORT: '8080', FRAMEWORK: 'koa' });
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): ServiceConfig {
  const input: Record<string, string> = {};
  for (const key of Object.keys(EnvSchema.shape)) {
    const value = env[key];
    if (value !== undefined && value.trim() !== '') input[key] = value;
  }
  const parsed = EnvSchema.safeParse(input);
  const problems: string[] = [];
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      problems.push(`${issue.path.join('.') || '(environment)'}: ${issue.message}`);
    }
  }
  const e = parsed.success ? parsed.data : ({} as z.infer<typeof EnvSchema>);

  // Checks across variables read what was set (even where its value is wrong), so one pass lists
  // every problem.
  const has = (key: keyof typeof EnvSchema.shape) => input[key] !== undefined;
  const network = e.NETWORK ?? CONFIG_DEFAULTS.NETWORK;
  const known = KNOWN_USDC[network];
  if (has('AI_MODEL_BASE_URL') !== has('AI_MODEL')) {
    problems.push('AI_MODEL_BASE_URL and AI_MODEL: set both to use a model, or neither');
  }
  if (has('CDP_API_KEY_ID') !== has('CDP_API_KEY_SECRET')) {
    problems.push(
      'CDP_API_KEY_ID and CDP_API_KEY_SECRET: set both to authenticate to a CDP facilitator, or neither',
    );
  }
  if (has('CDP_API_KEY_ID') && has('FACILITATOR_AUTH_HEADER')) {
    problems.push('FACILITATOR_AUTH_HEADER: set it or the CDP API key, not both');
  }
  if (!has('FACILITATOR_URL') && (has('CDP_API_KEY_ID') || has('FACILITATOR_AUTH_HEADER'))) {
    problems.push(
      'FACILITATOR_URL: required with facilitator authentication (without it the in-process facilitator needs none)',
    );
  }
  if (has('FACILITATOR_URL') && !has('PAY_TO')) {
    problems.push('PAY_TO: required when FACILITATOR_URL is set (the devnet payTo only exists in-process)');
  }
  const networkSet = (input['NETWORK'] ?? CONFIG_DEFAULTS.NETWORK).trim();
  if (CAIP2_EVM.test(networkSet) && !KNOWN_USDC[networkSet] && !has('ASSET')) {
    problems.push(`ASSET: required for ${networkSet} (no known USDC address)`);
  }
  const chosen = (input['UPSTREAM'] ?? CONFIG_DEFAULTS.UPSTREAM).trim() as UpstreamKind;
  const kindVariable = { mempool: 'MEMPOOL_URL', esplora: 'ESPLORA_URL', core: 'CORE_RPC_URL' } as const;
  const anyUrl = Object.values(kindVariable).some(has);
  if (UPSTREAMS.includes(chosen) && anyUrl && !has(kindVariable[chosen])) {
    problems.push(
      `UPSTREAM: ${chosen} needs ${kindVariable[chosen]} once any upstream URL is set (with none set, the embedded simulator serves every dialect)`,
    );
  }
  if (e.SIMULATOR_TIME_SCALE !== undefined && !Number.isFinite(e.SIMULATOR_TIME_SCALE)) {
    problems.push('SIMULATOR_TIME_SCALE: must be a finite number');
  }
  if (has('RPC_URL') && !has('FACILITATOR_URL')) {
    problems.push(
      'RPC_URL: only with FACILITATOR_URL (without it the embedded devnet is the chain and its own reader)',
    );
  }
  if (
    has('FACILITATOR_URL') &&
    !has('RPC_URL') &&
    (input['PROFILE']?.trim() ?? CONFIG_DEFAULTS.PROFILE) === 'production'
  ) {
    problems.push(
      `RPC_URL: required in the production profile with FACILITATOR_URL — a JSON-RPC URL of ${networkSet}, the chain reader that settles what a lost or failed facilitator answer leaves uncertain (without it a payer can be charged and never served)`,
    );
  }
  if (
    has('FACILITATOR_URL') &&
    !has('METRICS_PORT') &&
    !has('METRICS_TOKEN') &&
    (input['PROFILE']?.trim() ?? CONFIG_DEFAULTS.PROFILE) === 'production'
  ) {
    problems.push(
      'METRICS_PORT or METRICS_TOKEN: one is required in the production profile with FACILITATOR_URL — /metrics on a port of its own (kept off the public proxy) or behind a bearer token, never open beside the paid API',
    );
  }
  if (
    has('METRICS_PORT') &&
    input['METRICS_PORT']?.trim() !== '0' &&
    input['METRICS_PORT']?.trim() === (input['PORT']?.trim() ?? String(CONFIG_DEFAULTS.PORT))
  ) {
    problems.push('METRICS_PORT: must differ from PORT (it is a listener of its own)');
  }
  if (has('METRICS_HOST') && !has('METRICS_PORT')) {
    problems.push('METRICS_HOST: only with METRICS_PORT (without it /metrics is served on PORT)');
  }
  if (problems.length > 0) throw new ConfigError(problems);

  const kind = e.UPSTREAM ?? (CONFIG_DEFAULTS.UPSTREAM as UpstreamKind);
  const upstreamUrl =
    kind === 'mempool' ? e.MEMPOOL_URL : kind === 'esplora' ? e.ESPLORA_URL : e.CORE_RPC_URL;
  return {
    port: e.PORT ?? CONFIG_DEFAULTS.PORT,
    host: e.HOST ?? CONFIG_DEFAULTS.HOST,
    publicBaseUrl: e.PUBLIC_BASE_URL?.replace(/\/$/, ''),
    framework: e.FRAMEWORK ?? CONFIG_DEFAULTS.FRAMEWORK,
    profile: e.PROFILE ?? CONFIG_DEFAULTS.PROFILE,
    upstream: { kind, url: upstreamUrl, coreUser: e.CORE_RPC_USER, corePassword: e.CORE_RPC_PASSWORD },
    sources: { mempool: e.MEMPOOL_URL, esplora: e.ESPLORA_URL, core: e.CORE_RPC_URL },
    broadcast: { maxFeeRateSatVb: e.BROADCAST_MAX_FEE_RATE ?? CONFIG_DEFAULTS.BROADCAST_MAX_FEE_RATE },
    x402Demo: {
      rateLimitMax: e.X402_DEMO_RATE_LIMIT_MAX ?? CONFIG_DEFAULTS.X402_DEMO_RATE_LIMIT_MAX,
      rateLimitWindowMs: e.X402_DEMO_RATE_LIMIT_WINDOW_MS ?? CONFIG_DEFAULTS.X402_DEMO_RATE_LIMIT_WINDOW_MS,
    },
    ai: {
      rateLimitMax: e.AI_RATE_LIMIT_MAX ?? CONFIG_DEFAULTS.AI_RATE_LIMIT_MAX,
      rateLimitWindowMs: e.AI_RATE_LIMIT_WINDOW_MS ?? CONFIG_DEFAULTS.AI_RATE_LIMIT_WINDOW_MS,
      analystBudgetMs: e.AI_ANALYST_BUDGET_MS ?? CONFIG_DEFAULTS.AI_ANALYST_BUDGET_MS,
      model:
        e.AI_MODEL_BASE_URL && e.AI_MODEL
          ? {
              baseUrl: e.AI_MODEL_BASE_URL.replace(/\/$/, ''),
              name: e.AI_MODEL,
              apiKey: e.AI_MODEL_API_KEY,
              timeoutMs: e.AI_MODEL_TIMEOUT_MS ?? CONFIG_DEFAULTS.AI_MODEL_TIMEOUT_MS,
            }
          : undefined,
    },
    simulator: {
      scenario: e.SIMULATOR_SCENARIO ?? CONFIG_DEFAULTS.SIMULATOR_SCENARIO,
      seed: e.SIMULATOR_SEED ?? CONFIG_DEFAULTS.SIMULATOR_SEED,
      timeScale: e.SIMULATOR_TIME_SCALE ?? CONFIG_DEFAULTS.SIMULATOR_TIME_SCALE,
      historyHours: e.SIMULATOR_HISTORY_HOURS ?? CONFIG_DEFAULTS.SIMULATOR_HISTORY_HOURS,
    },
    snapshotIntervalMs: e.SNAPSHOT_INTERVAL_MS ?? CONFIG_DEFAULTS.SNAPSHOT_INTERVAL_MS,
    observatory: {
      enabled: e.OBSERVATORY_ENABLED ?? CONFIG_DEFAULTS.OBSERVATORY_ENABLED,
      historyUrl: e.HISTORY_URL ?? historyUrlBesideLedger(e.LEDGER_URL ?? CONFIG_DEFAULTS.LEDGER_URL),
      intervalMs: e.OBSERVATORY_INTERVAL_MS ?? CONFIG_DEFAULTS.OBSERVATORY_INTERVAL_MS,
      retentionHours: e.OBSERVATORY_RETENTION_HOURS ?? CONFIG_DEFAULTS.OBSERVATORY_RETENTION_HOURS,
    },
    facilitator: {
      url: e.FACILITATOR_URL?.replace(/\/$/, ''),
      name: e.FACILITATOR_NAME ?? CONFIG_DEFAULTS.FACILITATOR_NAME,
      timeoutMs: e.FACILITATOR_TIMEOUT_MS ?? CONFIG_DEFAULTS.FACILITATOR_TIMEOUT_MS,
      settleTimeoutMs: e.FACILITATOR_SETTLE_TIMEOUT_MS ?? CONFIG_DEFAULTS.FACILITATOR_SETTLE_TIMEOUT_MS,
      auth: facilitatorAuth(e),
    },
    chainReaders: e.RPC_URL ? { [network]: e.RPC_URL } : {},
    instanceId: e.INSTANCE_ID ?? defaultInstanceId(e.PORT ?? CONFIG_DEFAULTS.PORT),
    payment: {
      payTo: e.PAY_TO,
      network,
      asset: e.ASSET ?? known!.asset,
      assetName: e.ASSET_NAME ?? known?.name ?? 'USD Coin',
      assetVersion: e.ASSET_VERSION ?? known?.version ?? '2',
    },
    ledgerUrl: e.LEDGER_URL ?? CONFIG_DEFAULTS.LEDGER_URL,
    rateLimit: {
      enabled: e.RATE_LIMIT_ENABLED ?? CONFIG_DEFAULTS.RATE_LIMIT_ENABLED,
      max: e.RATE_LIMIT_MAX ?? CONFIG_DEFAULTS.RATE_LIMIT_MAX,
      windowMs: e.RATE_LIMIT_WINDOW_MS ?? CONFIG_DEFAULTS.RATE_LIMIT_WINDOW_MS,
      redisUrl: e.RATE_LIMIT_REDIS_URL,
      prefix: e.RATE_LIMIT_PREFIX ?? CONFIG_DEFAULTS.RATE_LIMIT_PREFIX,
    },
    trustProxy: e.TRUST_PROXY ?? CONFIG_DEFAULTS.TRUST_PROXY,
    cors: { origins: e.CORS_ORIGINS ?? CONFIG_DEFAULTS.CORS_ORIGINS },
    metrics: {
      port: e.METRICS_PORT,
      host: e.METRICS_HOST ?? e.HOST ?? CONFIG_DEFAULTS.HOST,
      token: e.METRICS_TOKEN,
    },
    logLevel: e.LOG_LEVEL ?? CONFIG_DEFAULTS.LOG_LEVEL,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS ?? CONFIG_DEFAULTS.SHUTDOWN_TIMEOUT_MS,
  };
}

/** `<host name>-<port>`: stable across restarts, distinct for instances side by side; none for port 0. */
function defaultInstanceId(port: number): string | undefined {
  if (port === 0) return undefined;
  const host =
    hostname()
      .replace(/[^A-Za-z0-9._-]/g, '-')
      .slice(0, 57) || 'host';
  return `${host}-${port}`;
}

function facilitatorAuth(e: z.infer<typeof EnvSchema>): FacilitatorAuth | undefined {
  if (e.CDP_API_KEY_ID && e.CDP_API_KEY_SECRET) {
    return { kind: 'cdp', keyId: e.CDP_API_KEY_ID, secret: e.CDP_API_KEY_SECRET };
  }
  const line = e.FACILITATOR_AUTH_HEADER ? HEADER_LINE.exec(e.FACILITATOR_AUTH_HEADER) : null;
  return line ? { kind: 'header', name: line[1]!.toLowerCase(), value: line[2]! } : undefined;
}
