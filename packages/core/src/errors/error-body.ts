import { ERROR_CODES, type ErrorCode } from './codes';

/** The Error body every non-2xx answer but a 402 carries (`docs/errors.md`). */
export interface ErrorBody {
  error: {
    code: string;
    message: string;
    request_id: string;
    retryable: boolean;
    retry?: { instruction: 'retry_exact_payment_payload' };
  };
}

export interface ErrorBodyInput {
  code: ErrorCode;
  message?: string;
  requestId: string;
  /** Overrides the code's default. */
  retryable?: boolean;
  /** Adds `retry.instruction = retry_exact_payment_payload` (uncertain settlements). */
  retryExactPayload?: boolean;
}

/** Builds the Error body of a code; the message defaults to the code's documented meaning. */
export function buildErrorBody(input: ErrorBodyInput): ErrorBody {
  const def = ERROR_CODES[input.code];
  const body: ErrorBody = {
    error: {
      code: input.code,
      message: input.message ?? def.meaning,
      request_id: input.requestId,
      retryable: input.retryable ?? def.retryable,
    },
  };
  if (input.retryExactPayload) body.error.retry = { instruction: 'retry_exact_payment_payload' };
  return body;
}
