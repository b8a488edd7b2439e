// The packages as a user gets them: packed with `npm pack` (prepack builds), installed from the
// tarballs into a scratch app outside the workspace, then each adapter README's smallest paywall
// (Base Sepolia, the public test facilitator) runs unchanged but for its placeholders on a devnet
// of chain 84532, paid by the official x402 client and settled by the packed
// `tollbooth-facilitator` command; a TypeScript consumer type-checks against the packed
// declarations; every entry point loads through require() and import; and publint and
// arethetypeswrong judge every tarball. The packing is done once for all cases.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { checkPackage, createPackageFromTarballData } from '@arethetypeswrong/core';
import { type Devnet, startDevnet } from '@tollbooth/devnet';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { balances, deltas, fillSnippetPlaceholders, payerAccount } from './support/interop-harness';
import {
  installScratchApp,
  type PackedPackage,
  packPackages,
  ROOT,
  scratchDir,
  workspaceVersion,
} from './support/packed-packages';

const run = promisify(execFile);
const PRICE = 1000n; // '$0.001' in the READMEs, USDC's 6 decimals
const FRAMEWORKS = ['express', 'fastify', 'koa'] as const;
type Framework = (typeof FRAMEWORKS)[number];

let scratch: string;
let packed: PackedPackage[];
let app: string;
let devnet: Devnet;
let facilitator: { url: string; child: ChildProcess };
const started: ChildProcess[] = [];

beforeAll(async () => {
  scratch = scratchDir('tollbooth-tarball-');
  // The devnet starts while the packages build.
  [packed, devnet] = await Promise.all([packPackages(scratch), startDevnet({ chainId: 84532, payers: 3 })]);
  const versions = [
    'express',
    'fastify',
    'koa',
    '@koa/router',
    '@types/node',
    '@types/express',
    '@types/koa',
    '@modelcontextprotocol/sdk',
  ];
  app = await installScratchApp(
    packed,
    versions.map((name) => `${name}@${workspaceVersion(name)}`),
  );
  facilitator = await startCommand(
    join(app, 'node_modules', '.bin', 'tollbooth-facilitator'),
    ['--rpc-url', devnet.rpcUrl, '--chain-id', String(devnet.chainId), '--port', '0'],
    { TOLLBOOTH_FACILITATOR_KEY: devnet.accounts.facilitator.privateKey },
    /https?:\/\/[^\s)]+/,
  );
  // A guard against a hang, not a speed verdict: packing builds every package (about 2m20s of
  // CPU), and on a shared, loaded machine that has taken over ten minutes.
}, 1_800_000);

afterAll(async () => {
  for (const child of started) child.kill('SIGTERM');
  await devnet?.stop();
  for (const dir of [scratch, app]) if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Spawns a command and resolves once a line of its output matches `ready` (the match). */
function startCommand(
  command: string,
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
  cwd = app,
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: 'pipe' });
  started.push(child);
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = ready.exec(output);
      if (match) resolve({ url: match[1] ?? match[0], child });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) =>
      reject(new Error(`${command} exited with ${code} before it was ready:\n${output}`)),
    );
  });
}

/** The first TypeScript block of a package README: its smallest example. */
function readmeExample(dir: string): string {
  const readme = packed
    .find((p) => p.dir === dir)!
    .files.get('README.md')!
    .toString('utf8');
  const block = /```ts\n([\s\S]*?)```/.exec(readme);
  if (!block?.[1]) throw new Error(`packages/${dir}/README.md has no \`\`\`ts example`);
  return block[1];
}

/** The example with its placeholders filled in for the devnet and the packed facilitator. */
function runnableExample(framework: Framework): string {
  const source = readmeExample(framework);
  const filled = fillSnippetPlaceholders(`the ${framework} README example`, source, {
    payTo: devnet.accounts.payTo.address,
    facilitatorUrl: facilitator.url,
  });
  return ts.transpileModule(filled, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  }).outputText;
}

describe('the packed tarballs', () => {
  it('hold the build, the README, the LICENSE and the CHANGELOG, and no sources', () => {
    for (const p of packed) {
      const names = [...p.files.keys()];
      expect(names, p.name).toEqual(expect.arrayContaining(['README.md', 'LICENSE', 'CHANGELOG.md']));
      expect(
        names.filter((n) => n.startsWith('src/')),
        p.name,
      ).toEqual([]);
      expect(
        names.some((n) => n.startsWith('dist/')),
        p.name,
      ).toBe(true);
      expect(p.files.get('LICENSE')!.toString('utf8')).toMatch(/^MIT License/);
    }
  });

  it('publish manifests without the workspace-only condition, scripts or build config', () => {
    for (const p of packed) {
      const text = p.files.get('package.json')!.toString('utf8');
      expect(text, p.name).not.toContain('tollbooth-source');
      expect(Object.keys(p.manifest), p.name).not.toEqual(
        expect.arrayContaining([expect.stringMatching(/^(scripts|devDependencies|tollbooth)$/)]),
      );
    }
  });

  it('name only files that are in the tarball', () => {
    const targets = (value: unknown): string[] =>
      typeof value === 'string' ? [value] : Object.values(value as object).flatMap(targets);
    for (const p of packed) {
      const named = targets([
        p.manifest.exports,
        p.manifest.bin ?? {},
        p.manifest.main,
        p.manifest.module,
        p.manifest.types,
      ]);
      for (const target of named)
        expect(p.files.has(target.replace(/^\.\//, '')), `${p.name} ${target}`).toBe(true);
    }
  });

  it('pass publint', async () => {
    const problems: string[] = [];
    for (const p of packed) {
      const tarball = new Uint8Array(p.data).buffer;
      const { messages, pkg } = await publint({ pack: { tarball }, level: 'suggestion', strict: true });
      for (const m of messages) problems.push(`${p.name}: ${m.code} ${formatMessage(m, pkg)}`);
    }
    expect(problems).toEqual([]);
  });

  // node10 is TypeScript's resolution for `"moduleResolution": "node"`, which predates `exports`
  // and cannot see subpaths such as `@tollbooth/core/testing`; the packages need Node ≥ 20.19,
  // whose TypeScript settings are node16 / nodenext / bundler.
  it('pass arethetypeswrong under node16 (ESM and CommonJS) and bundler resolution', async () => {
    const problems: string[] = [];
    for (const p of packed) {
      const result = await checkPackage(createPackageFromTarballData(new Uint8Array(p.data)));
      if (!('problems' in result)) throw new Error(`${p.name}: arethetypeswrong found no types`);
      for (const problem of result.problems) {
        if ('resolutionKind' in problem && problem.resolutionKind === 'node10') continue;
        problems.push(`${p.name}: ${JSON.stringify(problem)}`);
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('installed from the tarballs into an app outside the workspace', () => {
  /** Every entry point a manifest exports, as a specifier (`@tollbooth/core/testing`). */
  const specifiers = () =>
    packed.flatMap((p) => Object.keys(p.manifest.exports).map((key) => `${p.name}${key.slice(1)}`));

  it('loads every entry point with require() and with import, with named exports', async () => {
    const script = (kind: 'require' | 'import') =>
      specifiers()
        .map(
          (s) =>
            `{ const m = ${kind === 'require' ? `require('${s}')` : `await import('${s}')`}; ` +
            `if (Object.keys(m).filter((k) => k !== 'default').length === 0) throw new Error('${s}: no exports'); }`,
        )
        .join('\n');
    writeFileSync(join(app, 'load.cjs'), `${script('require')}\nconsole.log('ok');\n`);
    writeFileSync(join(app, 'load.mjs'), `${script('import')}\nconsole.log('ok');\n`);
    for (const file of ['load.cjs', 'load.mjs']) {
      const { stdout } = await run(process.execPath, [file], { cwd: app });
      expect(stdout.trim(), file).toBe('ok');
    }
  });

  it("shares one copy of core's modules between its entry points (one TollboothError class)", async () => {
    // Each entry point bundled alone would carry its own TollboothError: an error thrown by
    // @tollbooth/core/discovery would then not be an instance of the class @tollbooth/core exports.
    const check = (load: (s: string) => string) => `const core = ${load('@tollbooth/core')};
const discovery = ${load('@tollbooth/core/discovery')};
let thrown;
try { discovery.createDiscovery({}); } catch (error) { thrown = error; }
if (!(thrown instanceof core.TollboothError) || thrown.code !== 'invalid_config') throw new Error(String(thrown));
console.log('one class');
`;
    writeFileSync(
      join(app, 'shared.cjs'),
      check((s) => `require('${s}')`),
    );
    writeFileSync(
      join(app, 'shared.mjs'),
      check((s) => `await import('${s}')`),
    );
    for (const file of ['shared.cjs', 'shared.mjs']) {
      const { stdout } = await run(process.execPath, [file], { cwd: app });
      expect(stdout.trim(), file).toBe('one class');
    }
  });

  it('type-checks the README examples and an ESM and a CommonJS consumer against the packed types', async () => {
    for (const framework of FRAMEWORKS)
      writeFileSync(join(app, `readme-${framework}.ts`), readmeExample(framework));
    const imports = specifiers()
      .map((s, i) => `import * as m${i} from '${s}';\nexport const k${i}: string[] = Object.keys(m${i});`)
      .join('\n');
    const gate = `import { createHttpFacilitatorClient, createPaymentGate, type PaymentGate } from '@tollbooth/core';
import { createExactEvmScheme } from '@tollbooth/evm';
import { createPayingClient, createEvmPaymentSigner } from '@tollbooth/fetch';
export const gate: PaymentGate = createPaymentGate({
  routes: { 'GET /x': { accepts: { network: 'eip155:8453', payTo: '0x0000000000000000000000000000000000000001', price: '$0.01' } } },
  schemes: [createExactEvmScheme()],
  facilitator: createHttpFacilitatorClient({ url: 'http://127.0.0.1:4021' }),
});
export const pay = typeof createPayingClient === 'function' && typeof createEvmPaymentSigner === 'function';
`;
    writeFileSync(join(app, 'consumer.mts'), `${imports}\n${gate}`);
    writeFileSync(join(app, 'consumer.cts'), `${imports}\n${gate}`);
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          types: ['node'],
          noEmit: true,
          skipLibCheck: true,
        },
        include: ['readme-*.ts', 'consumer.mts', 'consumer.cts'],
      }),
    );
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: app }).catch(
      (error: { stdout: string }) => ({ stdout: error.stdout }),
    );
    expect(result.stdout).toBe('');
  });

  it.each(FRAMEWORKS)(
    "runs the %s README's smallest paywall, paid by the official client and settled by the packed tollbooth-facilitator",
    async (framework) => {
      const file = join(app, `paywall-${framework}.mjs`);
      writeFileSync(file, runnableExample(framework));
      const preload = join(ROOT, 'test', 'support', 'report-listen-port.mjs');
      const server = await startCommand(process.execPath, ['--import', preload, file], {}, /listening (\S+)/);
      const payerIndex = FRAMEWORKS.indexOf(framework);
      const payer = payerAccount(devnet, payerIndex);
      const before = await balances(devnet, payer.address);
      const client = new x402Client().register('eip155:*', new ExactEvmScheme(payer));

      const unpaid = await fetch(`${server.url}/api/v1/fees/now`);
      const response = await wrapFetchWithPayment(fetch, client)(`${server.url}/api/v1/fees/now`);

      expect(unpaid.status).toBe(402);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ paidBy: payer.address });
      const receipt = decodePaymentResponseHeader(response.headers.get('payment-response')!);
      expect(receipt).toMatchObject({ success: true, network: 'eip155:84532', payer: payer.address });
      expect(await deltas(devnet, payer.address, before)).toEqual({ paid: PRICE, received: PRICE });
      server.child.kill('SIGTERM');
    },
  );
});
