// The CPU-profile pointer of the report: one server per case runs under `node --cpu-prof`,
// autocannon warms it up and then drives one measured run, and the hottest frames of the samples
// taken during that run are named with their self time per request.
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchConfig } from './lib/config';
import { type HotFrame, hotFrames } from './lib/cpu-profile';
import { PAID_PATH } from './lib/fixtures';
import type { HttpCase } from './lib/http-case';
import type { PaymentPool } from './lib/payments';
import { runOnce } from './lib/run-cases';
import { FROM_SOURCE, SERVER_NODE_FLAGS, type ServerProcess, spawnServer } from './lib/server-process';

export interface ProfiledCase {
  id: string;
  label: string;
  command: string;
  frames: HotFrame[];
  /** Requests served inside the profiled window, and their rate. */
  requests: number;
  rps: number;
  /** The server's CPU per request in the window (all threads, `process.cpuUsage`), µs. */
  cpuUsPerRequest: number;
  /** The main thread's sampled time per request (idle and module loading left out), µs. */
  mainUsPerRequest: number;
}

export interface ProfileSectionResult {
  cases: ProfiledCase[];
  notes: string[];
}

/** Sampling interval, µs (V8's default is 1,000: too few samples for a 3 s run). */
const PROFILE_INTERVAL_US = 100;

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
        nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-interval=${PROFILE_INTERVAL_US}`],
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
      const payments = Math.min(2000, Math.floor((pool.headers.length - 1) / 2));
      const warm = await runOnce(c, config, seconds, payments);
      log(`  warm-up ${p.id}: ${Math.round(warm.rps)} req/s`);
      // The whole life is profiled (names of native functions are only right from the start), but
      // only the samples taken during the measured run count: start-up and warm-up stay out.
      const before = await server.cpu();
      const run = await runOnce(c, config, seconds, payments);
      const after = await server.cpu();
      await server.stop();
      // The main thread's profile is the largest (tsx's loader thread writes a small one too).
      const file = readdirSync(dir)
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((f) => join(dir, f))
        .sort((a, b) => statSync(b).size - statSync(a).size)[0];
      const requests = after.requests - before.requests;
      if (!file || requests <= 0) {
        notes.push(`${p.id}: no profile was written.`);
        continue;
      }
      const { frames, busyUs } = hotFrames(file, 12, { from: before.at, to: after.at });
      cases.push({
        id: p.id,
        label: p.label,
        command: `node ${SERVER_NODE_FLAGS.map((f) => `${f} `).join('')}--cpu-prof --cpu-prof-interval=${PROFILE_INTERVAL_US}${FROM_SOURCE ? ' --conditions=tollbooth-source' : ''} --import tsx bench/servers/${p.file}.ts tollbooth`,
        frames,
        requests,
        rps: run.rps,
        cpuUsPerRequest: (after.user + after.system - before.user - before.system) / requests,
        mainUsPerRequest: busyUs / requests,
      });
      log(
        `  ${p.id}: ${frames
          .slice(0, 4)
          .map((f) => `${f.name} ${(f.selfUs / requests).toFixed(1)} µs`)
          .join(', ')} per request`,
      );
    } catch (error) {
      notes.push(`${p.id}: profiling failed (${(error as Error).message}).`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return { cases, notes };
}
