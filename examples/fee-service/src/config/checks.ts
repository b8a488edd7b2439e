// The checks of the fee service's environment across variables (one variable's own rules are in
// schema.ts): loadConfig (load.ts) lists their problems with the others, all at once.
import type * as z from 'zod';
import {
  CAIP2_EVM,
  CONFIG_DEFAULTS,
  type EnvSchema,
  KNOWN_USDC,
  UPSTREAMS,
  type UpstreamKind,
} from './schema';

/**
 * Every problem between variables, one sentence each naming them. Reads what was set (`input`,
 * even where its value is wrong) and the parsed values (`e`), so one pass lists every problem.
 */
export function crossVariableProblems(
  input: Readonly<Record<string, string>>,
  e: Partial<z.infer<typeof EnvSchema>>,
): string[] {
  const problems: string[] = [];
  // Checks across variables read what was set (even where its value is wrong), so one pass lists
  // every problem.
  const has = (key: keyof typeof EnvSchema.shape) => input[key] !== undefined;
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
  problems.push(...embeddedPortProblems(input));
  return problems;
}

/** The listeners `npm start` runs in-process, by the variable that pins each one's port. */
const EMBEDDED_PORTS = {
  SIMULATOR_PORT: {
    only: ['MEMPOOL_URL', 'ESPLORA_URL', 'CORE_RPC_URL'],
    why: 'the embedded simulator runs only without an upstream URL',
  },
  DEVNET_PORT: { only: ['FACILITATOR_URL'], why: 'the devnet runs only without FACILITATOR_URL' },
  FACILITATOR_PORT: {
    only: ['FACILITATOR_URL'],
    why: 'the in-process facilitator runs only without FACILITATOR_URL',
  },
} as const;

/**
 * The ports of the embedded simulator, devnet and facilitator: each only where that part runs,
 * and no two listeners of the service on one fixed port (0 picks a free one, as by default).
 */
function embeddedPortProblems(input: Readonly<Record<string, string>>): string[] {
  const problems: string[] = [];
  for (const [variable, rule] of Object.entries(EMBEDDED_PORTS)) {
    const conflicting = rule.only.filter((other) => input[other] !== undefined);
    if (input[variable] !== undefined && conflicting.length > 0) {
      problems.push(`${variable}: not with ${conflicting.join(', ')} (${rule.why})`);
    }
  }
  const fixed = ['PORT', 'METRICS_PORT', ...Object.keys(EMBEDDED_PORTS)]
    .map((variable) => ({
      variable,
      port: (input[variable] ?? (variable === 'PORT' ? String(CONFIG_DEFAULTS.PORT) : '')).trim(),
    }))
    .filter(({ port }) => /^[1-9][0-9]*$/.test(port));
  fixed.forEach((a, i) => {
    for (const b of fixed.slice(i + 1)) {
      // METRICS_PORT against PORT has its own sentence (above).
      if (a.port !== b.port || (a.variable === 'PORT' && b.variable === 'METRICS_PORT')) continue;
      problems.push(`${a.variable} and ${b.variable}: both ${a.port} (each is a listener of its own)`);
    }
  });
  return problems;
}
