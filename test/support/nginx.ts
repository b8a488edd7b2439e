// A real nginx (Debian's package: `apt-get install -y nginx`; `.ci/run` installs it) in front of a
// service, started by a test as an unprivileged process (as `nobody` when the test runs as root)
// with its own configuration, logs and temporary directories, and nginx's default buffers. Its
// `location` is the one docs/production.md gives (TLS aside: the header buffers are the same).
// The access log records, per request, the status nginx answered and the PAYMENT-SIGNATURE it
// received, so a test sees each payment as the proxy did.
import { type ChildProcess, spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as pause } from 'node:timers/promises';

/** Debian's nginx. */
export const NGINX_PATH = process.env.NGINX_PATH ?? '/usr/sbin/nginx';

/** Whether proxy tests can run here; under CI they must (a missing nginx fails them). */
export const nginxAvailable = existsSync(NGINX_PATH) || process.env.CI === 'true';
if (!nginxAvailable)
  console.warn(`[proxy tests] skipped: no nginx at ${NGINX_PATH} (apt-get install -y nginx)`);

/** One request as nginx logged it. */
export interface ProxiedRequest {
  method: string;
  uri: string;
  /** The status nginx answered (its own 400 for a header too large, or the upstream's). */
  status: number;
  /** The PAYMENT-SIGNATURE nginx received, or '' without one. */
  paymentSignature: string;
}

export interface RunningNginx {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** Every request logged so far, in order. */
  requests(): ProxiedRequest[];
  /** The error log so far. */
  errors(): string;
  stop(): Promise<void>;
}

/** A port free right now (the kernel's pick), for a server that cannot be told to take port 0. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** `nobody`'s ids from /etc/passwd, for dropping root. */
function nobody(): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('nobody:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  return { uid: Number(uid ?? 65534), gid: Number(gid ?? 65534) };
}

/**
 * The `location / { … }` of the nginx block in docs/production.md, as written there, its upstream
 * moved to `upstreamPort`: the proxy the tests run is the one the operators' guide gives.
 */
export function productionLocation(upstreamPort: number): string {
  const doc = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'production.md'), 'utf8');
  const block = /```nginx\n([\s\S]*?)```/.exec(doc)?.[1];
  const location = block && /^( *)location \/ \{\n[\s\S]*?^\1\}$/m.exec(block)?.[0];
  if (!location) throw new Error('docs/production.md has no nginx block with a location /');
  if (!location.includes('proxy_pass http://127.0.0.1:3000;'))
    throw new Error('the location of docs/production.md no longer proxies to 127.0.0.1:3000');
  return location.replace('http://127.0.0.1:3000', `http://127.0.0.1:${upstreamPort}`);
}

/** The configuration: docs/production.md's `location`, every path in `dir`, no buffer changed. */
function configOf(dir: string, port: number, upstreamPort: number): string {
  return `daemon off;
master_process off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log info;
events { worker_connections 256; }
http {
  log_format payments '$request_method\\t$request_uri\\t$status\\t$http_payment_signature';
  access_log ${dir}/access.log payments;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  server {
    listen 127.0.0.1:${port};
${productionLocation(upstreamPort)}
  }
}
`;
}

/** Resolves once `port` accepts a connection, or rejects when nginx exited first. */
async function accepting(port: number, child: ChildProcess, errors: () => string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`nginx exited (${child.exitCode ?? child.signalCode}): ${errors()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    await pause(50);
  }
  throw new Error(`nginx did not accept connections on ${port}: ${errors()}`);
}

/**
 * Starts nginx on `port` (see `freePort`) in front of `127.0.0.1:upstreamPort`, in the foreground
 * (one process, no master), killed by `stop()`.
 */
export async function startNginx(options: { port: number; upstreamPort: number }): Promise<RunningNginx> {
  const dir = mkdtempSync(join(tmpdir(), 'nginx-'));
  for (const sub of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, sub));
  const config = join(dir, 'nginx.conf');
  writeFileSync(config, configOf(dir, options.port, options.upstreamPort));
  const asRoot = process.getuid?.() === 0;
  const user = asRoot ? nobody() : undefined;
  if (user) {
    chmodSync(dir, 0o755);
    for (const sub of ['', 'client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'])
      chownSync(join(dir, sub), user.uid, user.gid);
  }
  const errors = () =>
    existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : '';
  const child = spawn(NGINX_PATH, ['-p', dir, '-c', config, '-e', join(dir, 'error.log')], {
    stdio: ['ignore', 'ignore', 'pipe'],
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  let running = true;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      running = false;
      resolve();
    }),
  );
  try {
    await accepting(options.port, child, () => `${stderr}${errors()}`);
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url: `http://127.0.0.1:${options.port}`,
    requests() {
      const log = join(dir, 'access.log');
      if (!existsSync(log)) return [];
      return readFileSync(log, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => {
          const [method = '', uri = '', status = '0', signature = '-'] = line.split('\t');
          return {
            method,
            uri,
            status: Number(status),
            paymentSignature: signature === '-' ? '' : signature,
          };
        });
    },
    errors,
    async stop() {
      if (running) {
        // SIGQUIT: a graceful stop, the access log written out.
        child.kill('SIGQUIT');
        await Promise.race([exited, pause(5_000)]);
        if (running) child.kill('SIGKILL');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
