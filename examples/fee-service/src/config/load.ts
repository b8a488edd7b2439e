import { hostname } from 'node:os';
import type { Availability } from '@tollbooth/core';
import type * as z from 'zod';
import type { CorsOrigins } from '../http/cors';
import type { SCENARIO_NAMES } from '../simulator/scenarios';
import { crossVariableProblems } from './checks';
import type { FacilitatorAuth } from './facilitator-auth';
import { historyUrlBesideLedger } from './history-url';
import {
  CONFIG_DEFAULTS,
  EnvSchema,
  type Framework,
  HEADER_LINE,
  KNOWN_USDC,
  type LOG_LEVELS,
  type Profile,
  type UpstreamKind,
} from './schema';

/**
 * The fee service's configuration, read from environment variables and validated with zod at
 * start-up. Every problem is reported at once (one {@link ConfigError} listing them all).
 */

/** The validated configuration of one fee-service process. */
export interface ServiceConfig {
  port: number;
  host: string;
  /** Canonical base URL; undefined = `http://<host>:<port>` once listening. */
  publicBaseUrl: string | undefined;
  framework: Framework;
  profile: Profile;
  /**
   * The operator's availability of paid resources by path (`RESOURCE_AVAILABILITY`), over the
   * profile's: e.g. the decision, paused in the production profile, made active.
   */
  resourceAvailability: Readonly<Record<string, Availability>>;
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
  /**
   * Ports of what `npm start` runs in-process when nothing external is configured: the simulator
   * (`SIMULATOR_PORT`), the devnet's anvil (`DEVNET_PORT`), the facilitator (`FACILITATOR_PORT`).
   * Undefined or 0: a free port.
   */
  embeddedPorts: {
    simulator: number | undefined;
    devnet: number | undefined;
    facilitator: number | undefined;
  };
  snapshotIntervalMs: number;
  observatory: {
    /** Off: no recorder, and the observatory's resources are published paused. */
    enabled: boolean;
    /** Where the history is kept: `sqlite:<file>` (default beside a SQLite ledger) or `postgres://…`. */
    historyUrl: string;
    /** The variable `historyUrl` comes from: `HISTORY_URL`, else derived from `LEDGER_URL`. */
    historyFrom: 'HISTORY_URL' | 'LEDGER_URL';
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
  /**
   * What a settled payment's payload sent again gets (`REPLAY`, docs/ledger.md#replay-a-stance):
   * the stored answer within its window (default), or, `strict`, 402 payment_already_used once
   * it was answered.
   */
  replay: 'stored-answer' | 'strict';
  /**
   * Ask the facilitator's `/verify` on every paid request (`VERIFY_BEFORE_SETTLE`,
   * docs/ledger.md#local-verify) instead of going straight to `/settle` (routes that settle first)
   * or verifying locally with the chain reader (routes that settle after their handler).
   */
  verifyBeforeSettle: boolean;
  /**
   * The secret that signs sign-in nonces (`SIGN_IN_SECRET`, docs/sign-in-with-x.md#the-fee-service);
   * unset: a random one per process, so a proof is only accepted by the instance whose challenge
   * it signed (a payer answered by another instance pays instead).
   */
  signInSecret: string | undefined;
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

  problems.push(...crossVariableProblems(input, e));
  if (problems.length > 0) throw new ConfigError(problems);

  const network = e.NETWORK ?? CONFIG_DEFAULTS.NETWORK;
  const known = KNOWN_USDC[network];
  const kind = e.UPSTREAM ?? (CONFIG_DEFAULTS.UPSTREAM as UpstreamKind);
  const upstreamUrl =
    kind === 'mempool' ? e.MEMPOOL_URL : kind === 'esplora' ? e.ESPLORA_URL : e.CORE_RPC_URL;
  return {
    port: e.PORT ?? CONFIG_DEFAULTS.PORT,
    host: e.HOST ?? CONFIG_DEFAULTS.HOST,
    publicBaseUrl: e.PUBLIC_BASE_URL?.replace(/\/$/, ''),
    framework: e.FRAMEWORK ?? CONFIG_DEFAULTS.FRAMEWORK,
    profile: e.PROFILE ?? CONFIG_DEFAULTS.PROFILE,
    resourceAvailability: e.RESOURCE_AVAILABILITY ?? {},
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
    embeddedPorts: { simulator: e.SIMULATOR_PORT, devnet: e.DEVNET_PORT, facilitator: e.FACILITATOR_PORT },
    snapshotIntervalMs: e.SNAPSHOT_INTERVAL_MS ?? CONFIG_DEFAULTS.SNAPSHOT_INTERVAL_MS,
    observatory: {
      enabled: e.OBSERVATORY_ENABLED ?? CONFIG_DEFAULTS.OBSERVATORY_ENABLED,
      historyUrl: e.HISTORY_URL ?? historyUrlBesideLedger(e.LEDGER_URL ?? CONFIG_DEFAULTS.LEDGER_URL),
      historyFrom: e.HISTORY_URL ? 'HISTORY_URL' : 'LEDGER_URL',
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
    replay: e.REPLAY ?? CONFIG_DEFAULTS.REPLAY,
    verifyBeforeSettle: e.VERIFY_BEFORE_SETTLE ?? CONFIG_DEFAULTS.VERIFY_BEFORE_SETTLE,
    signInSecret: e.SIGN_IN_SECRET,
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
