// Reads a V8 .cpuprofile and names its hottest frames by self time. Frames in our TypeScript
// sources (run through tsx, whose line numbers are those of the transformed code) are given the
// line of their declaration in the source file.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface HotFrame {
  name: string;
  location: string;
  selfPercent: number;
  /** Self time in the profile, µs. */
  selfUs: number;
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const sourceCache = new Map<string, string[]>();

function sourceLine(file: string, name: string, fallback: number): number {
  let lines = sourceCache.get(file);
  if (!lines) {
    try {
      lines = readFileSync(file, 'utf8').split('\n');
    } catch {
      lines = [];
    }
    sourceCache.set(file, lines);
  }
  if (!name || name === '(anonymous)') return fallback;
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const patterns = [
    new RegExp(`function\\s+${escaped}\\b`),
    new RegExp(`\\b(?:const|let)\\s+${escaped}\\s*=`),
    new RegExp(`^\\s*(?:async\\s+)?${escaped}\\s*\\(`),
    new RegExp(`\\b${escaped}\\s*[:=]\\s*(?:async\\s*)?\\(`),
  ];
  for (const pattern of patterns) {
    const index = lines.findIndex((line) => pattern.test(line));
    if (index >= 0) return index + 1;
  }
  return fallback;
}

/**
 * The `limit` frames with the most self time (idle and module loading left out), in percent of the
 * rest, and that rest (`busyUs`: the main thread's sampled time, µs). With `window` (monotonic
 * µs, the profile's own clock), only the samples taken inside it count.
 */
export function hotFrames(
  path: string,
  limit = 12,
  window?: { from: number; to: number },
): { frames: HotFrame[]; busyUs: number } {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as {
    nodes: ProfileNode[];
    samples: number[];
    timeDeltas: number[];
    startTime: number;
  };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<string, { name: string; location: string; time: number }>();
  let total = 0;
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    if (window && (at < window.from || at > window.to)) return;
    const node = byId.get(id);
    if (!node) return;
    const { functionName, url, lineNumber } = node.callFrame;
    // Idle time, and module loading at start-up (tsx compiling the sources), are not the case's cost.
    if (
      functionName === '(idle)' ||
      url.startsWith('node:internal/modules/') ||
      url.includes('/node_modules/tsx/')
    )
      return;
    const dt = profile.timeDeltas[i] ?? 0;
    total += dt;
    let location = url ? url.replace(/^file:\/\//, '') : '(native)';
    if (location.startsWith(ROOT)) {
      const relative = location.slice(ROOT.length);
      const line = relative.startsWith('node_modules/')
        ? lineNumber + 1
        : sourceLine(location, functionName, lineNumber + 1);
      location = `${relative}:${line}`;
    } else if (url) location = `${location}:${lineNumber + 1}`;
    const name = functionName || '(anonymous)';
    const key = `${name}@${location}`;
    const entry = self.get(key) ?? { name, location, time: 0 };
    entry.time += dt;
    self.set(key, entry);
  });
  const frames = [...self.values()]
    .sort((a, b) => b.time - a.time)
    .slice(0, limit)
    .map((e) => ({
      name: e.name,
      location: e.location,
      selfPercent: (e.time / total) * 100,
      selfUs: e.time,
    }));
  return { frames, busyUs: total };
}
