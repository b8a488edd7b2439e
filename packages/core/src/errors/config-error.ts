import { TollboothError } from './tollbooth-error';

/**
 * A configuration that cannot work, found when it is given (route compilation, gate or client
 * creation), never at the first request. Every problem found is listed, one per line, so a
 * deployment is fixed in one pass; `problems` holds them for programs.
 *
 * @example
 * try {
 *   compileRoutes(routes, { schemes });
 * } catch (error) {
 *   if (error instanceof TollboothConfigError) console.error(error.problems.join('\n'));
 * }
 */
export class TollboothConfigError extends TollboothError {
  override readonly name: string = 'TollboothConfigError';
  /** Each problem, a sentence naming the setting, e.g. `route "GET /x" accepts[0]: payTo …`. */
  readonly problems: readonly string[];

  /** @param subject what was being configured, e.g. `routes config` */
  constructor(subject: string, problems: readonly string[], options: { cause?: unknown } = {}) {
    super('invalid_config', `invalid ${subject}:\n- ${problems.join('\n- ')}`, {
      ...options,
      details: { problems: [...problems] },
    });
    this.problems = problems;
  }
}

/** Throws a {@link TollboothConfigError} when `problems` is not empty. */
export function throwConfigProblems(subject: string, problems: readonly string[]): void {
  if (problems.length > 0) throw new TollboothConfigError(subject, problems);
}
