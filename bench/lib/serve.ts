// The child side of a benchmark server: announce the port on stdout, answer CPU-usage questions
// from the parent over IPC, and exit cleanly on SIGTERM (so `--cpu-prof` writes its profile).
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CpuSample {
  /** process.cpuUsage(): user and system µs. */
  user: number;
  system: number;
  /** Requests the server finished since it started. */
  requests: number;
  /** When the sample was taken: the monotonic clock in µs, the clock of V8's CPU profiles. */
  at: number;
}

let requests = 0;

/** Counts finished requests on a Node HTTP server (used for CPU per request). */
export function countRequests(server: Server): void {
  server.on('request', (_req, res) => {
    res.once('finish', () => {
      requests++;
    });
  });
}

/** Listens on a free loopback port (unless listening already) and prints `PORT=<n>` for the parent. */
export async function announce(
  server: Server,
  options: { info?: Record<string, string>; stop?: () => Promise<void> } = {},
): Promise<void> {
  countRequests(server);
  if (!server.listening) {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
  }
  const { port } = server.address() as AddressInfo;
  process.on('message', (message: unknown) => {
    if ((message as { type?: string })?.type === 'cpu') {
      const { user, system } = process.cpuUsage();
      const at = Number(process.hrtime.bigint() / 1000n);
      process.send?.({ type: 'cpu', user, system, requests, at } satisfies CpuSample & { type: string });
    }
  });
  const stop = () => {
    // A server with its own shutdown (the fee service stops its devnet) runs it; others just close.
    const own = options.stop;
    if (own) {
      void own().finally(() => process.exit(0));
    } else {
      server.closeAllConnections();
      server.close(() => process.exit(0));
    }
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.once('SIGTERM', stop);
  process.once('disconnect', stop);
  for (const [k, v] of Object.entries(options.info ?? {})) process.stdout.write(`${k}=${v}\n`);
  process.stdout.write(`PORT=${port}\n`);
}
