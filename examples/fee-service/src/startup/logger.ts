import { type Logger, pino } from 'pino';
import pretty from 'pino-pretty';
import type { ServiceConfig } from '../config';

/**
 * The service's logger: JSON lines (one object per line, for a log collector), or pino-pretty's
 * coloured lines when `pretty` (`npm start` in a terminal: stdout is a TTY). Pretty output is
 * written synchronously, so nothing is lost when the process exits right after a line.
 */
export function createServiceLogger(
  level: ServiceConfig['logLevel'],
  options: { pretty?: boolean } = {},
): Logger {
  const settings = { level, base: { service: 'fee-service' } };
  if (!options.pretty) return pino(settings);
  return pino(
    settings,
    pretty({ colorize: true, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' }),
  );
}
