// What `npm start` refuses before it listens: a configuration with problems (all listed at once),
// and a facilitator whose /supported lacks the configured network. A facilitator that does not
// answer only warns. Real processes of the service against a real HTTP facilitator.
import type { ChildProcess } from 'node:child_process';
import { generateKeyPairSync, type KeyObject, verify } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMain } from './support/main-process';

const children: ChildProcess[] = [];
const PAY_TO = '0x209693Bc6afc0C5328bA36FaF03C514EF312287C';

const start = (env: Record<string, string>) => startMain(env, children);

/** A facilitator over real HTTP whose /supported answers what the test sets, recording requests. */
let facilitator: Server;
let facilitatorUrl: string;
let supported: { status: number; body: unknown };
const seen: Array<{ method?: string; url?: string; headers: IncomingHttpHeaders }> = [];

beforeAll(async () => {
  facilitator = createServer((req, res) => {
    seen.push({ method: req.method, url: req.url, headers: req.headers });
    if (req.url !== '/x402/supported') return res.writeHead(404).end();
    res
      .writeHead(supported.status, { 'content-type': 'application/json' })
      .end(JSON.stringify(supported.body));
  });
  await new Promise<void>((resolve) => facilitator.listen(0, '127.0.0.1', resolve));
  facilitatorUrl = `http://127.0.0.1:${(facilitator.address() as AddressInfo).port}/x402`;
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  facilitator.closeAllConnections();
  await new Promise<void>((resolve) => facilitator.close(() => resolve()));
});

/** The claims of a JWT whose ES256 signature `publicKey` verifies; throws otherwise. */
function verifiedClaims(
  jwt: string,
  publicKey: KeyObject,
): { header: Record<string, unknown>; claims: Record<string, unknown> } {
  const [header, claims, signature] = jwt.split('.');
  const ok = verify(
    'sha256',
    Buffer.from(`${header}.${claims}`),
    { key: publicKey, dsaEncoding: 'ieee-p1363' },
    Buffer.from(signature!, 'base64url'),
  );
  if (!ok) throw new Error('the JWT signature does not verify');
  const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  return { header: decode(header!), claims: decode(claims!) };
}

describe('npm start refuses what cannot work', () => {
  it('lists every problem of the configuration at once, exit 2, no stack', async () => {
    const run = start({
      PAY_TO: '0xYourAddress',
      ASSET: '0x833589fcD6eDb6E08f4c7C32D4f71b54bdA02913', // one character's case changed
      NETWORK: 'base',
      FACILITATOR_URL: 'ftp://facilitator.example',
      LEDGER_URL: 'mysql://db',
      PUBLIC_BASE_URL: 'fees.example.com',
      CDP_API_KEY_ID: 'organizations/x/apiKeys/y',
      RATE_LIMIT_MAX: '0',
    });
    expect(await run.exited).toBe(2);
    const problems = run.out.stderr
      .split('\n')
      .filter((line) => line.startsWith('- '))
      .map((line) => line.slice(2));
    expect(problems.map((p) => p.split(':')[0]).sort()).toEqual(
      [
        'ASSET',
        'CDP_API_KEY_ID and CDP_API_KEY_SECRET',
        'FACILITATOR_URL',
        'LEDGER_URL',
        'NETWORK',
        'PAY_TO',
        'PUBLIC_BASE_URL',
        'RATE_LIMIT_MAX',
      ].sort(),
    );
    expect(problems).toContain('PAY_TO: is "0xYourAddress", not an EVM address (0x and 40 hex digits)');
    expect(problems.find((p) => p.startsWith('ASSET'))).toContain('EIP-55 checksum');
    expect(run.out.stderr).not.toMatch(/\n\s+at /);
    expect(run.out.stdout).toBe('');
  }, 60_000);

  it('refuses a facilitator whose /supported lacks the network, asking it with a CDP JWT', async () => {
    // A testnet facilitator: Base Sepolia only. The service is configured for Base (eip155:8453).
    supported = {
      status: 200,
      body: { kinds: [{ x402Version: 2, scheme: 'exact', network: 'eip155:84532' }] },
    };
    seen.length = 0;
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const keyId = 'organizations/tollbooth/apiKeys/test';
    const run = start({
      FACILITATOR_URL: facilitatorUrl,
      PAY_TO,
      CDP_API_KEY_ID: keyId,
      CDP_API_KEY_SECRET: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      OBSERVATORY_ENABLED: 'false',
    });
    expect(await run.exited, run.out.stderr).toBe(2);
    expect(run.out.stderr).toContain(
      `the facilitator at ${facilitatorUrl} does not support exact on eip155:8453 (x402 v2)`,
    );
    expect(run.out.stderr).toContain(`supports: exact on eip155:84532 (x402 v2)`);
    expect(run.out.stderr).not.toMatch(/\n\s+at /);
    expect(run.out.stdout).not.toContain('fee service listening');

    const asked = seen.find((request) => request.url === '/x402/supported');
    expect(asked?.method).toBe('GET');
    const bearer = /^Bearer (.+)$/.exec(String(asked?.headers.authorization))?.[1];
    const { header, claims } = verifiedClaims(bearer!, publicKey);
    expect(header).toMatchObject({ alg: 'ES256', kid: keyId, typ: 'JWT' });
    expect(claims).toMatchObject({
      sub: keyId,
      iss: 'cdp',
      uris: [`GET ${new URL(facilitatorUrl).host}/x402/supported`],
    });
    expect(Number(claims['exp']) - Number(claims['nbf'])).toBe(120);
  }, 120_000);

  it('starts with a warning when the facilitator does not answer, and /readyz says so', async () => {
    supported = { status: 503, body: { error: 'restarting' } };
    seen.length = 0;
    const run = start({
      FACILITATOR_URL: facilitatorUrl,
      PAY_TO,
      FACILITATOR_AUTH_HEADER: 'X-Api-Key: k-123',
      OBSERVATORY_ENABLED: 'false',
    });
    const lines = () =>
      run.out.stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    const listening = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const check = () => {
        const found = lines().find((entry) => entry['msg'] === 'fee service listening');
        if (found) resolve(found);
      };
      run.child.stdout!.on('data', check);
      run.child.once('exit', () => reject(new Error(`exited: ${run.out.stderr}`)));
    });
    const warning = lines().find((entry) =>
      String(entry['msg']).startsWith('facilitator /supported did not answer'),
    );
    expect(warning).toMatchObject({ level: 40, network: 'eip155:8453', reason: 'supported: HTTP 503' });
    expect(seen[0]?.headers['x-api-key']).toBe('k-123');
    const ready = await fetch(`${String(listening['url'])}/readyz`);
    expect(ready.status).toBe(503);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  }, 120_000);
});
