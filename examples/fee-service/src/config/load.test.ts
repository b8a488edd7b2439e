import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CONFIG_DEFAULTS, ConfigError, loadConfig } from '.';

const PAYEE = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';

describe('loadConfig', () => {
  it('uses the embedded defaults when the environment is empty', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      framework: 'fastify',
      profile: 'local',
      upstream: { kind: 'mempool', url: undefined },
      facilitator: { url: undefined, name: 'tollbooth' },
      payment: {
        payTo: undefined,
        network: 'eip155:8453',
        asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
        assetName: 'USD Coin',
      },
      ledgerUrl: CONFIG_DEFAULTS.LEDGER_URL,
      replay: 'stored-answer',
      verifyBeforeSettle: false,
      rateLimit: { enabled: true, max: 60, windowMs: 60_000, redisUrl: undefined },
    });
  });

  it('reads every variable and treats empty ones as unset', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      PUBLIC_BASE_URL: 'https://fees.example.com/',
      FRAMEWORK: 'koa',
      PROFILE: 'production',
      UPSTREAM: 'esplora',
      ESPLORA_URL: 'https://blockstream.info/api',
      FACILITATOR_URL: 'https://x402.org/facilitator',
      FACILITATOR_NAME: 'x402.org',
      RPC_URL: 'https://mainnet.base.org',
      INSTANCE_ID: 'fees-a',
      PAY_TO: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
      LEDGER_URL: 'postgres://postgres@127.0.0.1/test',
      REPLAY: 'strict',
      VERIFY_BEFORE_SETTLE: 'true',
      RATE_LIMIT_MAX: '5',
      RATE_LIMIT_REDIS_URL: 'redis://127.0.0.1:6379',
      TRUST_PROXY: 'true',
      METRICS_PORT: '9464',
      LOG_LEVEL: 'debug',
      MEMPOOL_URL: '',
    });
    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      publicBaseUrl: 'https://fees.example.com',
      framework: 'koa',
      profile: 'production',
      upstream: { kind: 'esplora', url: 'https://blockstream.info/api' },
      facilitator: { url: 'https://x402.org/facilitator', name: 'x402.org' },
      chainReaders: { 'eip155:8453': 'https://mainnet.base.org' },
      instanceId: 'fees-a',
      payment: { payTo: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C' },
      ledgerUrl: 'postgres://postgres@127.0.0.1/test',
      replay: 'strict',
      verifyBeforeSettle: true,
      rateLimit: { max: 5, redisUrl: 'redis://127.0.0.1:6379' },
      metrics: { port: 9464, host: '0.0.0.0', token: undefined },
      trustProxy: true,
      logLevel: 'debug',
    });
  });

  it('reports every problem at once', () => {
    let error: unknown;
    try {
      loadConfig({
        PORT: 'eighty',
        FRAMEWORK: 'hapi',
        LEDGER_URL: 'mysql://x',
        REPLAY: 'lenient',
        PAY_TO: '0x123',
        RATE_LIMIT_MAX: '0',
        PUBLIC_BASE_URL: 'https://fees.example.com/?x=1',
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.map((problem) => problem.split(':')[0]);
    expect(problems.sort()).toEqual(
      ['FRAMEWORK', 'LEDGER_URL', 'PAY_TO', 'PORT', 'PUBLIC_BASE_URL', 'RATE_LIMIT_MAX', 'REPLAY'].sort(),
    );
  });

  it('requires PAY_TO with an external facilitator and ASSET on an unknown network', () => {
    expect(() =>
      loadConfig({ FACILITATOR_URL: 'https://x402.org/facilitator', NETWORK: 'eip155:10' }),
    ).toThrow(/PAY_TO: required[\s\S]*ASSET: required for eip155:10/);
  });

  it('refuses an external facilitator without a chain reader in the production profile', () => {
    const external = {
      FACILITATOR_URL: 'https://x402.org/facilitator',
      PAY_TO: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
      METRICS_PORT: '9464',
    };
    expect(() => loadConfig({ ...external, PROFILE: 'production' })).toThrow(
      /RPC_URL: required in the production profile with FACILITATOR_URL — a JSON-RPC URL of eip155:8453/,
    );
    // The local profile starts, and says at start what it cannot guarantee (startup/payments.ts).
    expect(loadConfig(external).chainReaders).toEqual({});
    expect(
      loadConfig({
        ...external,
        PROFILE: 'production',
        NETWORK: 'eip155:84532',
        RPC_URL: 'https://sepolia.base.org',
      }).chainReaders,
    ).toEqual({ 'eip155:84532': 'https://sepolia.base.org' });
    // The embedded devnet is its own reader: an RPC_URL beside it is a mistake, said at once.
    expect(() => loadConfig({ RPC_URL: 'http://127.0.0.1:8545' })).toThrow(
      /RPC_URL: only with FACILITATOR_URL/,
    );
    expect(() => loadConfig({ ...external, RPC_URL: 'ftp://node' })).toThrow(/RPC_URL: must be a URL/);
    expect(loadConfig({}).chainReaders).toEqual({});
  });

  it('names the instance in ledger owners: INSTANCE_ID, else host and port, none for port 0', () => {
    expect(loadConfig({ INSTANCE_ID: 'fees-1' }).instanceId).toBe('fees-1');
    expect(loadConfig({ PORT: '8080' }).instanceId).toMatch(/^[A-Za-z0-9._-]+-8080$/);
    expect(loadConfig({ PORT: '8081' }).instanceId).not.toBe(loadConfig({ PORT: '8080' }).instanceId);
    expect(loadConfig({ PORT: '0' }).instanceId).toBeUndefined();
    expect(() => loadConfig({ INSTANCE_ID: 'a b' })).toThrow(/INSTANCE_ID: must be 1 to 64/);
  });

  it('refuses placeholder, zero and mistyped addresses, and lists the problems of related variables even when others are invalid', () => {
    let error: unknown;
    try {
      loadConfig({
        PAY_TO: '0x0000000000000000000000000000000000000000',
        ASSET: '0x833589fcD6eDb6E08f4c7C32D4f71b54bdA02913',
        PORT: 'eighty',
        FACILITATOR_AUTH_HEADER: 'Bearer abc',
        PUBLIC_BASE_URL: 'fees.example.com',
      });
    } catch (caught) {
      error = caught;
    }
    expect((error as ConfigError).problems).toEqual(
      expect.arrayContaining([
        'PAY_TO: is the zero address: whatever is paid to it is lost',
        expect.stringMatching(/^ASSET: .* fails its EIP-55 checksum/),
        expect.stringMatching(/^FACILITATOR_AUTH_HEADER: must be one header line/),
        'FACILITATOR_URL: required with facilitator authentication (without it the in-process facilitator needs none)',
        expect.stringMatching(/^PUBLIC_BASE_URL: must be a URL/),
      ]),
    );
    expect(() => loadConfig({ PAY_TO: '0xYourAddress' })).toThrow(
      'PAY_TO: is "0xYourAddress", not an EVM address (0x and 40 hex digits)',
    );
  });

  it('reads facilitator authentication: a CDP key, or one header line', () => {
    const pem = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    const base = { FACILITATOR_URL: 'https://api.cdp.coinbase.com/platform/v2/x402', PAY_TO: PAYEE };
    expect(loadConfig({ ...base, CDP_API_KEY_ID: 'k', CDP_API_KEY_SECRET: pem }).facilitator.auth).toEqual({
      kind: 'cdp',
      keyId: 'k',
      secret: pem,
    });
    expect(loadConfig({ ...base, FACILITATOR_AUTH_HEADER: 'X-Api-Key:  s3cret' }).facilitator.auth).toEqual({
      kind: 'header',
      name: 'x-api-key',
      value: 's3cret',
    });
    expect(() => loadConfig({ ...base, CDP_API_KEY_ID: 'k', CDP_API_KEY_SECRET: 'not a key' })).toThrow(
      /CDP_API_KEY_SECRET: not a CDP API key secret/,
    );
    expect(loadConfig(base).facilitator.auth).toBeUndefined();
  });

  it("reads the analyst's time budget: 5 s by default, AI_ANALYST_BUDGET_MS from 100 ms to 10 min", () => {
    expect(loadConfig({}).ai.analystBudgetMs).toBe(5_000);
    expect(loadConfig({ AI_ANALYST_BUDGET_MS: '20000' }).ai.analystBudgetMs).toBe(20_000);
    expect(() => loadConfig({ AI_ANALYST_BUDGET_MS: '50' })).toThrow(/AI_ANALYST_BUDGET_MS/);
    expect(() => loadConfig({ AI_ANALYST_BUDGET_MS: 'soon' })).toThrow(/AI_ANALYST_BUDGET_MS/);
  });

  it('reads the CORS origins: * by default, or exact origins, each refused problem listed', () => {
    expect(loadConfig({}).cors).toEqual({ origins: '*' });
    expect(loadConfig({ CORS_ORIGINS: ' * ' }).cors).toEqual({ origins: '*' });
    expect(loadConfig({ CORS_ORIGINS: 'https://app.example.com, http://localhost:5173' }).cors).toEqual({
      origins: ['https://app.example.com', 'http://localhost:5173'],
    });
    let problems: readonly string[] = [];
    try {
      loadConfig({
        CORS_ORIGINS: 'https://app.example.com/,*,app.example.com,https://APP.example.com,ftp://x.example',
        PORT: 'x',
      });
    } catch (error) {
      problems = (error as ConfigError).problems;
    }
    const refused = problems.filter((problem) => problem.startsWith('CORS_ORIGINS:'));
    expect(refused.map((problem) => problem.match(/"([^"]*)"/)?.[1])).toEqual([
      'https://app.example.com/',
      '*',
      'app.example.com',
      'https://APP.example.com',
      'ftp://x.example',
    ]);
    expect(problems).toContainEqual(expect.stringMatching(/^PORT: /));
  });

  it('serves /metrics on the main port by default, and needs METRICS_PORT or METRICS_TOKEN in production with FACILITATOR_URL', () => {
    expect(loadConfig({}).metrics).toEqual({ port: undefined, host: '127.0.0.1', token: undefined });
    const production = {
      PROFILE: 'production',
      FACILITATOR_URL: 'https://x402.org/facilitator',
      PAY_TO: PAYEE,
      RPC_URL: 'https://mainnet.base.org',
    };
    expect(() => loadConfig(production)).toThrow(
      /METRICS_PORT or METRICS_TOKEN: one is required in the production profile with FACILITATOR_URL/,
    );
    // The devnet rehearsal (no FACILITATOR_URL) and the local profile keep /metrics open.
    expect(loadConfig({ PROFILE: 'production' }).metrics.port).toBeUndefined();
    expect(loadConfig({ ...production, PROFILE: 'local' }).metrics.token).toBeUndefined();
    expect(loadConfig({ ...production, METRICS_PORT: '9464' }).metrics).toEqual({
      port: 9464,
      host: '127.0.0.1',
      token: undefined,
    });
    expect(loadConfig({ HOST: '0.0.0.0', METRICS_PORT: '9464' }).metrics.host).toBe('0.0.0.0');
    expect(loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '10.0.0.5' }).metrics.host).toBe('10.0.0.5');
    expect(() => loadConfig({ METRICS_HOST: '10.0.0.5' })).toThrow(/METRICS_HOST: only with METRICS_PORT/);
    const token = 'a'.repeat(32);
    expect(loadConfig({ ...production, METRICS_TOKEN: token }).metrics).toEqual({
      port: undefined,
      host: '127.0.0.1',
      token,
    });
    expect(() => loadConfig({ METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN: must be at least 16/);
    expect(() => loadConfig({ METRICS_TOKEN: 'has a space in it, long' })).toThrow(/METRICS_TOKEN/);
    expect(() => loadConfig({ PORT: '8080', METRICS_PORT: '8080' })).toThrow(
      /METRICS_PORT: must differ from PORT/,
    );
    expect(() => loadConfig({ METRICS_PORT: '3000' })).toThrow(/METRICS_PORT: must differ from PORT/);
    expect(loadConfig({ PORT: '0', METRICS_PORT: '0' }).metrics.port).toBe(0);
  });
  it('pins the ports of the embedded simulator, devnet and facilitator, only where they run and never twice', () => {
    expect(
      loadConfig({ SIMULATOR_PORT: '18443', DEVNET_PORT: '18545', FACILITATOR_PORT: '18402' }).embeddedPorts,
    ).toEqual({
      simulator: 18443,
      devnet: 18545,
      facilitator: 18402,
    });
    expect(loadConfig({}).embeddedPorts).toEqual({
      simulator: undefined,
      devnet: undefined,
      facilitator: undefined,
    });
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env);
        return [];
      } catch (error) {
        return (error as ConfigError).problems;
      }
    };
    expect(
      problems({
        SIMULATOR_PORT: '18443',
        MEMPOOL_URL: 'https://mempool.space',
        DEVNET_PORT: '18545',
        FACILITATOR_PORT: '18402',
        FACILITATOR_URL: 'https://x402.org/facilitator',
        PAY_TO: PAYEE,
      }),
    ).toEqual([
      'SIMULATOR_PORT: not with MEMPOOL_URL (the embedded simulator runs only without an upstream URL)',
      'DEVNET_PORT: not with FACILITATOR_URL (the devnet runs only without FACILITATOR_URL)',
      'FACILITATOR_PORT: not with FACILITATOR_URL (the in-process facilitator runs only without FACILITATOR_URL)',
    ]);
    expect(problems({ SIMULATOR_PORT: '3000', DEVNET_PORT: '9000', FACILITATOR_PORT: '9000' })).toEqual([
      'PORT and SIMULATOR_PORT: both 3000 (each is a listener of its own)',
      'DEVNET_PORT and FACILITATOR_PORT: both 9000 (each is a listener of its own)',
    ]);
    expect(problems({ SIMULATOR_PORT: '0', DEVNET_PORT: '0', PORT: '0' })).toEqual([]);
    expect(problems({ SIMULATOR_PORT: '70000' })[0]).toMatch(/^SIMULATOR_PORT: /);
  });
});
