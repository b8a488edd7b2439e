import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ANVIL_PACKAGES, resolveAnvilPath } from './anvil';
import { DevnetError } from './errors';

const packaged = resolveAnvilPath({ env: {}, platform: 'linux', arch: 'x64' });
const scratch = mkdtempSync(join(tmpdir(), 'devnet-anvil-'));
// An anvil "installed by foundryup" somewhere on PATH: a link to the packaged binary.
const onPath = join(scratch, 'anvil');
symlinkSync(packaged, onPath);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function notFound(options: Parameters<typeof resolveAnvilPath>[0]): string {
  try {
    resolveAnvilPath(options);
  } catch (error) {
    expect(error).toBeInstanceOf(DevnetError);
    expect((error as DevnetError).code).toBe('ERR_DEVNET_ANVIL_NOT_FOUND');
    return (error as Error).message;
  }
  throw new Error('expected ERR_DEVNET_ANVIL_NOT_FOUND');
}

describe('resolveAnvilPath', () => {
  it('finds the binary of the linux x64 package, the platform this suite runs on', () => {
    expect(packaged).toMatch(/@foundry-rs[/\\]anvil-linux-amd64[/\\]bin[/\\]anvil$/);
  });

  it('prefers anvilPath, then ANVIL_PATH, to the package', () => {
    const env = { ANVIL_PATH: onPath };
    expect(resolveAnvilPath({ env })).toBe(onPath);
    expect(resolveAnvilPath({ anvilPath: packaged, env })).toBe(packaged);
  });

  it('refuses an ANVIL_PATH that is not a file, naming it', () => {
    expect(notFound({ env: { ANVIL_PATH: scratch } })).toBe(
      `anvil not found: ANVIL_PATH is ${JSON.stringify(scratch)}, which is not a file`,
    );
  });

  it('falls back to an anvil on PATH where the platform package is not installed', () => {
    expect(
      resolveAnvilPath({ env: { PATH: `/nonexistent:${scratch}` }, platform: 'darwin', arch: 'arm64' }),
    ).toBe(onPath);
    expect(
      resolveAnvilPath({
        env: { HOME: join(scratch, 'home'), PATH: scratch },
        platform: 'freebsd',
        arch: 'x64',
      }),
    ).toBe(onPath);
  });

  it('says which package is missing, or that none exists, and how to point at an anvil', () => {
    expect(notFound({ env: { PATH: '/nonexistent' }, platform: 'darwin', arch: 'arm64' })).toBe(
      'anvil not found for darwin arm64: its npm package @foundry-rs/anvil-darwin-arm64 is not installed ' +
        '(an optional dependency: npm install --include=optional), and no anvil is on PATH. Install Foundry ' +
        '(https://getfoundry.sh) and set ANVIL_PATH=/path/to/anvil (tollbooth-devnet --anvil, startDevnet({ anvilPath })).',
    );
    expect(notFound({ env: {}, platform: 'freebsd', arch: 'x64' })).toMatch(
      /^anvil not found for freebsd x64: no npm package ships anvil for it, and no anvil is on PATH\./,
    );
  });

  it('knows a package for each platform foundry publishes anvil for', () => {
    expect(Object.keys(ANVIL_PACKAGES).sort()).toEqual([
      'darwin-arm64',
      'darwin-x64',
      'linux-arm64',
      'linux-x64',
      'win32-x64',
    ]);
  });
});
