// Preloaded (node --import) into a README example that the tarball test runs unchanged: every
// server the example starts listens on a free port instead of the one it names, and the first
// one prints `listening <url>` for the test to read.
import net from 'node:net';

const listen = net.Server.prototype.listen;
let reported = false;

net.Server.prototype.listen = function listenOnFreePort(...args) {
  const [first] = args;
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) args[0] = 0;
  else if (first !== null && typeof first === 'object' && 'port' in first) args[0] = { ...first, port: 0 };
  this.once('listening', () => {
    const address = this.address();
    if (reported || address === null || typeof address === 'string') return;
    reported = true;
    const host =
      address.family === 'IPv6'
        ? `[${address.address === '::' ? '::1' : address.address}]`
        : address.address === '0.0.0.0'
          ? '127.0.0.1'
          : address.address;
    process.stdout.write(`listening http://${host}:${address.port}\n`);
  });
  return listen.apply(this, args);
};
