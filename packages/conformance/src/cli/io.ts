import { writeFileSync } from 'node:fs';

/** Where the CLI writes: stdout lines, stderr lines and report files (injectable for tests). */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  writeFile(path: string, text: string): void;
}

export const processIo: CliIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  writeFile: (path, text) => writeFileSync(path, text),
};

/** A command-line mistake: the usage is printed and the exit status is 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Parses a number of seconds into milliseconds, naming the option when it is not one. */
export function secondsOption(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback * 1000;
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds < 0) throw new UsageError(`${name} must be a number of seconds`);
  return seconds * 1000;
}

/**
 * Parses a command's arguments: the options, or the exit status when the run ends here (2 after
 * printing the mistake and the usage to stderr, 0 after printing the usage asked for).
 */
export function parseCommand<R extends { help: boolean }>(
  argv: string[],
  parse: (argv: string[]) => R,
  usage: string,
  io: CliIo,
): Exclude<R, { help: true }> | number {
  let options: R;
  try {
    options = parse(argv);
  } catch (error) {
    io.err(`${error instanceof Error ? error.message : String(error)}\n\n${usage}`);
    return 2;
  }
  if (!options.help) return options as Exclude<R, { help: true }>;
  io.out(usage);
  return 0;
}
