// The machine a run happened on, and how busy it was (the machine may be shared).
import os from 'node:os';

export interface MachineInfo {
  cpuModel: string;
  cpus: number;
  cpuMhz: number;
  memoryGiB: number;
  freeMemoryGiB: number;
  os: string;
  node: string;
  date: string;
  loadBefore: number[];
  loadAfter?: number[];
  /** Load averages sampled during the run (1-minute figure). */
  loadSamples: number[];
}

export function describeMachine(): MachineInfo {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cpus: cpus.length,
    cpuMhz: cpus[0]?.speed ?? 0,
    memoryGiB: os.totalmem() / 2 ** 30,
    freeMemoryGiB: os.freemem() / 2 ** 30,
    os: `${os.type()} ${os.release()} (${os.platform()}/${os.arch()})`,
    node: process.version,
    date: new Date().toISOString(),
    loadBefore: os.loadavg(),
    loadSamples: [],
  };
}

/** Samples the 1-minute load average every 10 s until stopped. */
export function sampleLoad(info: MachineInfo): () => void {
  const timer = setInterval(() => info.loadSamples.push(os.loadavg()[0]!), 10_000);
  timer.unref();
  return () => {
    clearInterval(timer);
    info.loadAfter = os.loadavg();
  };
}
