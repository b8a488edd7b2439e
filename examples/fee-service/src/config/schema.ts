// The fee service's environment, variable by variable: the zod schema loadConfig (load.ts) reads
// the process environment with, and the field parsers it is made of.
import type { Availability } from '@tollbooth/core';
import { checkEvmAddress } from '@tollbooth/evm';
import * as z from 'zod';
import type { CorsOrigins } from '../http/cors';
import { SCENARIO_NAMES } from '../simulator/scenarios';
import { cdpSigningKey } from './facilitator-auth';

const FRAMEWORKS = ['fastify', 'express', 'koa'] as const;
export type Framework = (typeof FRAMEWORKS)[number];
const PROFILES = ['production', 'local'] as const;
export type Profile = (typeof PROFILES)[number];
export const UPSTREAMS = ['mempool', 'esplora', 'core'] as const;
export type UpstreamKind = (typeof UPSTREAMS)[number];
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

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
  REPLAY: 'stored-answer',
  VERIFY_BEFORE_SETTLE: false,
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

export const CAIP2_EVM = /^eip155:[1-9][0-9]*$/;
/** `Name: value`, the name an HTTP token. */
export const HEADER_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(\S.*)$/;

/** An EVM address: 0x and 40 hex digits, not zero, its EIP-55 checksum right when mixed-case. */
const evmAddress = z
  .string()
  .trim()
  .superRefine((value, ctx) => {
    const problem = checkEvmAddress({ address: value });
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

const optionalString = z
  .string()
  .trim()
  .transform((value) => (value === '' ? undefined : value))
  .optional();

const integer = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .trim()
    .regex(/^[0-9]+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

const boolean = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.enum(['true', 'false', '1', '0', 'yes', 'no']))
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

const url = (protocols: readonly string[]) =>
  z
    .string()
    .trim()
    .refine(
      (value) => {
        try {
          return protocols.includes(new URL(value).protocol);
        } catch {
          return false;
        }
      },
      `must be a URL (${protocols.join(' or ')})`,
    );

const ledgerUrl = z
  .string()
  .trim()
  .refine(
    (value) =>
      /^sqlite:.+/.test(value) || /^rediss?:\/\/.+/.test(value) || /^postgres(ql)?:\/\/.+/.test(value),
    'must be sqlite:<file>, redis://… or postgres://…',
  );

/**
 * `RESOURCE_AVAILABILITY`: `<path>=<active|paused|retired>` pairs, comma-separated, by each paid
 * resource's path (`{param}` or `:param`), e.g. `/api/v1/fees/now=active`. Over the profile's.
 */
const resourceAvailability = z
  .string()
  .trim()
  .transform((value, ctx) => {
    const states: Record<string, Availability> = {};
    for (const entry of value.split(',').map((part) => part.trim())) {
      const match = /^(\/[^=\s]*)=(active|paused|retired)$/.exec(entry);
      if (!match) {
        ctx.addIssue({
          code: 'custom',
          message: `"${entry}" is not <path>=active, paused or retired (e.g. /api/v1/fees/now=active)`,
        });
        continue;
      }
      const path = match[1]!.replace(/\{([^}/]+)\}/g, ':$1');
      if (path in states) ctx.addIssue({ code: 'custom', message: `${path} is named twice` });
      states[path] = match[2] as Availability;
    }
    return states;
  });

export const EnvSchema = z.object({
  PORT: integer(0, 65_535).optional(),
  HOST: optionalString,
  PUBLIC_BASE_URL: url(['http:', 'https:'])
    .refine((value) => {
      if (!URL.canParse(value)) return true; // reported as not a URL
      const parsed = new URL(value);
      return !parsed.search && !parsed.hash && !parsed.username;
    }, 'must have no query, fragment or credentials')
    .optional(),
  FRAMEWORK: z.enum(FRAMEWORKS).optional(),
  PROFILE: z.enum(PROFILES).optional(),
  RESOURCE_AVAILABILITY: resourceAvailability.optional(),
  UPSTREAM: z.enum(UPSTREAMS).optional(),
  MEMPOOL_URL: url(['http:', 'https:']).optional(),
  ESPLORA_URL: url(['http:', 'https:']).optional(),
  CORE_RPC_URL: url(['http:', 'https:']).optional(),
  CORE_RPC_USER: optionalString,
  CORE_RPC_PASSWORD: optionalString,
  SIMULATOR_SCENARIO: z.enum(SCENARIO_NAMES).optional(),
  SIMULATOR_SEED: integer(0).optional(),
  SIMULATOR_TIME_SCALE: z
    .string()
    .trim()
    .regex(/^[0-9]+(\.[0-9]+)?$/, 'must be a number ≥ 0')
    .transform(Number)
    .optional(),
  SNAPSHOT_INTERVAL_MS: integer(100).optional(),
  HISTORY_URL: z
    .string()
    .trim()
    .refine(
      (value) => /^sqlite:.+/.test(value) || /^postgres(ql)?:\/\/.+/.test(value),
      'must be sqlite:<file> or postgres://…',
    )
    .optional(),
  OBSERVATORY_ENABLED: boolean.optional(),
  OBSERVATORY_INTERVAL_MS: integer(1000).optional(),
  OBSERVATORY_RETENTION_HOURS: integer(24, 24 * 3660).optional(),
  SIMULATOR_HISTORY_HOURS: integer(0, 24 * 30).optional(),
  FACILITATOR_URL: url(['http:', 'https:']).optional(),
  FACILITATOR_NAME: optionalString,
  FACILITATOR_TIMEOUT_MS: integer(1).optional(),
  FACILITATOR_SETTLE_TIMEOUT_MS: integer(1).optional(),
  RPC_URL: url(['http:', 'https:']).optional(),
  INSTANCE_ID: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1 to 64 letters, digits, dots, dashes or underscores')
    .optional(),
  FACILITATOR_AUTH_HEADER: z
    .string()
    .trim()
    .regex(HEADER_LINE, 'must be one header line, "Name: value" (e.g. "Authorization: Bearer …")')
    .optional(),
  CDP_API_KEY_ID: optionalString,
  CDP_API_KEY_SECRET: z
    .string()
    .superRefine((value, ctx) => {
      try {
        cdpSigningKey(value);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: `not a CDP API key secret: ${(error as Error).message}` });
      }
    })
    .optional(),
  PAY_TO: evmAddress.optional(),
  NETWORK: z
    .string()
    .trim()
    .regex(
      CAIP2_EVM,
      'must be a CAIP-2 EVM network, eip155:<chain id> (Base eip155:8453, Base Sepolia eip155:84532)',
    )
    .optional(),
  ASSET: evmAddress.optional(),
  ASSET_NAME: optionalString,
  ASSET_VERSION: optionalString,
  LEDGER_URL: ledgerUrl.optional(),
  REPLAY: z.enum(['stored-answer', 'strict']).optional(),
  VERIFY_BEFORE_SETTLE: boolean.optional(),
  SIGN_IN_SECRET: z
    .string()
    .min(32, 'must be at least 32 characters (the same on every instance)')
    .optional(),
  RATE_LIMIT_ENABLED: boolean.optional(),
  RATE_LIMIT_MAX: integer(1).optional(),
  RATE_LIMIT_WINDOW_MS: integer(1).optional(),
  RATE_LIMIT_REDIS_URL: url(['redis:', 'rediss:']).optional(),
  RATE_LIMIT_PREFIX: optionalString,
  TRUST_PROXY: boolean.optional(),
  METRICS_PORT: integer(0, 65_535).optional(),
  SIMULATOR_PORT: integer(0, 65_535).optional(),
  DEVNET_PORT: integer(0, 65_535).optional(),
  FACILITATOR_PORT: integer(0, 65_535).optional(),
  METRICS_HOST: optionalString,
  METRICS_TOKEN: z
    .string()
    .trim()
    .regex(
      /^[\x21-\x7e]{16,}$/,
      'must be at least 16 printable characters without spaces (e.g. openssl rand -hex 32)',
    )
    .optional(),
  CORS_ORIGINS: z
    .string()
    .trim()
    .transform((value, ctx): CorsOrigins => {
      if (value === '*') return '*';
      const origins = value.split(',').map((origin) => origin.trim());
      for (const origin of origins) {
        if (!isOrigin(origin)) {
          ctx.addIssue({
            code: 'custom',
            message: `"${origin}" is not an origin: * or a comma-separated list of scheme://host[:port] with no path (e.g. https://app.example.com)`,
          });
        }
      }
      return origins;
    })
    .optional(),
  LOG_LEVEL: z.enum(LOG_LEVELS).optional(),
  SHUTDOWN_TIMEOUT_MS: integer(0).optional(),
  BROADCAST_MAX_FEE_RATE: z
    .string()
    .trim()
    .regex(/^[0-9]+(\.[0-9]+)?$/, 'must be a fee rate in sat/vB')
    .transform(Number)
    .pipe(z.number().positive().max(100_000))
    .optional(),
  X402_DEMO_RATE_LIMIT_MAX: integer(1).optional(),
  X402_DEMO_RATE_LIMIT_WINDOW_MS: integer(1).optional(),
  AI_RATE_LIMIT_MAX: integer(1).optional(),
  AI_RATE_LIMIT_WINDOW_MS: integer(1).optional(),
  AI_MODEL_BASE_URL: url(['http:', 'https:']).optional(),
  AI_MODEL: optionalString,
  AI_MODEL_API_KEY: optionalString,
  AI_MODEL_TIMEOUT_MS: integer(100, 600_000).optional(),
  AI_ANALYST_BUDGET_MS: integer(100, 600_000).optional(),
});

/** An origin as a browser sends it: http(s), a host, an optional port, nothing after (`new URL(o).origin === o`). */
function isOrigin(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value;
}
