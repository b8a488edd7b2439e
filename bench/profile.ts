// The CPU-profile pointer of the report: one server per case runs under `node --cpu-prof`,
// autocannon drives that one case, and the profile's hottest frames are named.
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type HttpCase, runInterleaved } from './http';
import type { BenchConfig } from './lib/config';
import { type HotFrame, hotFrames } from './lib/cpu-profile';
import { PAID_PATH } from './lib/fixtures';
import type { PaymentPool } from './lib/payments';
import { type ServerProcess, spawnServer } from './lib/server-process';

export interface ProfiledCase {
  id: string;
  label: string;
  command: string;
  frames: HotFrame[];
}

export interface ProfileSectionResult {
  cases: ProfiledCase[];
  notes: string[];
}

const PROFILED = [
  { id: 'fastify/402', file: 'fastify', label: 'Fastify + Tollbooth, 402 path', paid: false },
  {
    id: 'fastify/paid',
    file: 'fastify',
    label: 'Fastify + Tollbooth, paid path (instant facilitator)',
    paid: true,
  },
  { id: 'express/402', file: 'express', label: 'Express + Tollbooth, 402 path', paid: false },
] as const;

export async function runProfileSection(
  config: BenchConfig,
  pool: PaymentPool,
  log: (line: string) => void,
  servers: ServerProcess[],
): Promise<ProfileSectionResult> {
  const cases: ProfiledCase[] = [];
  const notes: string[] = [];
  for (const p of PROFILED) {
    const dir = mkdtempSync(join(tmpdir(), 'tollbooth-prof-'));
    try {
      const server = await spawnServer(`profile-${p.id}`, p.file, {
        args: ['tollbooth'],
        nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
      });
      servers.push(server);
      const c: HttpCase = {
        id: p.id,
        framework: p.file,
        label: p.label,
        kind: p.paid ? 'paid' : '402',
        server,
        path: PAID_PATH,
        expectStatus: p.paid ? 200 : 402,
        ...(p.paid ? { pool: { headers: pool.headers.slice(0, -1), next: 0 } } : {}),
      };
      const seconds = config.quick ? 1 : 3;
      const profileConfig = {
        ...config,
        paidPerRun: Math.min(2000, Math.floor((pool.headers.length - 1) / 2)),
      };
      await runInterleaved([c], profileConfig, { rounds: 1, seconds, warmupSeconds: seconds, log });
      await server.stop();
      // The main thread's profile is the largest (tsx's loader thread writes a small one too).
      const files = readdirSync(dir)
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((f) => join(dir, f))
        .sort((a, b) => statSync(b).size - statSync(a).size);
      if (!files[0]) {
        notes.push(`${p.id}: no profile was written.`);
        continue;
      }
      const frames = hotFrames(files[0], 12);
      cases.push({
        id: p.id,
        label: p.label,
        command: `node --cpu-prof --conditions=tollbooth-source --import tsx bench/servers/${p.file}.ts tollbooth`,
        frames,
      });
      log(
        `  ${p.id}: ${frames
          .slice(0, 4)
          .map((f) => `${f.name} ${f.selfPercent.toFixed(1)} %`)
          .join(', ')}`,
      );
    } catch (error) {
      notes.push(`${p.id}: profiling failed (${(error as Error).message}).`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return { cases, notes };
}
