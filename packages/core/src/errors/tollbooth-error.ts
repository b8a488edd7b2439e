import { ERROR_CODES, type ErrorCode, errorDocsUrl } from './codes';

export interface TollboothErrorOptions {
  cause?: unknown;
  /** Extra machine-readable facts (for logs; never sent to clients). */
  details?: Record<string, unknown>;
}

/**
 * The one base class of every error Tollbooth throws: a stable `code`, a short message and a
 * link to the code's documentation.
 *
 * @example
 * throw new TollboothError('invalid_config', 'routes: "GET /x" has no accepts');
 */
export class TollboothError extends Error {
  override readonly name: string = 'TollboothError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryable: boolean;
  readonly docsUrl: string;
  readonly details?: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: TollboothErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = ERROR_CODES[code].status;
    this.retryable = ERROR_CODES[code].retryable;
    this.docsUrl = errorDocsUrl(code);
    if (options.details) this.details = options.details;
  }
}
