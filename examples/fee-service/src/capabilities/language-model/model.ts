import OpenAI from 'openai';
import * as z from 'zod';

/**
 * Any OpenAI-compatible chat-completions endpoint: OpenAI, Azure OpenAI's v1 endpoint, or a local
 * server that speaks the same API (Ollama, llama.cpp's server, vLLM, LM Studio). The model only
 * ever writes prose (and, for the analyst, asks for tools); a failure of any kind is a
 * {@link ModelFailure} the caller turns into the deterministic answer.
 */
export interface LanguageModelOptions {
  /** Base URL of the API, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`. */
  baseUrl: string;
  /** Model name sent in each request and reported as the answer's `provider`. */
  model: string;
  /** Bearer key; local servers usually need none. */
  apiKey?: string;
  /** Whole-request deadline, headers and body. Default 8,000 ms. */
  timeoutMs?: number;
  /** Completion token limit. Default 500. */
  maxTokens?: number;
  /** Sampling temperature. Default 0.2. */
  temperature?: number;
  /** Injectable clock for the rate-limit cool-down. Default `Date.now`. */
  now?: () => number;
}

export const LANGUAGE_MODEL_DEFAULTS = { timeoutMs: 8_000, maxTokens: 500, temperature: 0.2 } as const;
/** Cool-down after a 429 without a usable `retry-after`, and the longest one honoured. */
export const RATE_LIMIT_DEFAULT_COOLDOWN_MS = 10_000;
export const RATE_LIMIT_MAX_COOLDOWN_MS = 300_000;

export const MODEL_FAILURE_REASONS = [
  'timeout',
  'rate_limited',
  'cooling_down',
  'upstream_error',
  'connection_error',
  'request_refused',
  'malformed_response',
  'empty_response',
  'ungrounded_numbers',
  'tool_loop_exhausted',
] as const;
export type ModelFailureReason = (typeof MODEL_FAILURE_REASONS)[number];

/** Why the model's answer was not used. */
export class ModelFailure extends Error {
  override readonly name = 'ModelFailure';
  constructor(
    readonly reason: ModelFailureReason,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

export type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
export type ToolDefinition = OpenAI.Chat.Completions.ChatCompletionFunctionTool;

/** One assistant turn: prose, tool requests, or both. */
export interface AssistantTurn {
  content: string | null;
  toolCalls: { id: string; name: string; arguments: string }[];
}

const CompletionShape = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullable().optional(),
          tool_calls: z
            .array(
              z.object({
                id: z.string(),
                type: z.literal('function'),
                function: z.object({ name: z.string(), arguments: z.string() }),
              }),
            )
            .nullable()
            .optional(),
        }),
      }),
    )
    .min(1),
});

/** `retry-after` as seconds or an HTTP date, in ms from now; undefined when absent or unreadable. */
function retryAfterMs(headers: Headers | undefined, now: number): number | undefined {
  const value = headers?.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

export interface LanguageModel {
  /** The model's name, reported as `provider`. */
  readonly name: string;
  /**
   * One chat completion.
   * @throws ModelFailure on a timeout, rate limit, error status, unreachable server or malformed reply
   */
  complete(request: {
    messages: ChatMessage[];
    tools?: ToolDefinition[];
    signal?: AbortSignal;
  }): Promise<AssistantTurn>;
}

/**
 * Creates the model client (the `openai` package, no retries: a failed call falls back at once
 * and a 429 starts a cool-down during which no call is made).
 * @example
 * const model = createLanguageModel({ baseUrl: 'http://127.0.0.1:11434/v1', model: 'llama3.2' });
 * const turn = await model.complete({ messages: [{ role: 'user', content: 'Hello' }] });
 */
export function createLanguageModel(options: LanguageModelOptions): LanguageModel {
  const timeoutMs = options.timeoutMs ?? LANGUAGE_MODEL_DEFAULTS.timeoutMs;
  const now = options.now ?? Date.now;
  const client = new OpenAI({
    baseURL: options.baseUrl,
    // The SDK insists on a key; local servers ignore the header.
    apiKey: options.apiKey ?? 'no-key',
    timeout: timeoutMs,
    maxRetries: 0,
  });
  let coolUntil = 0;

  const toFailure = (error: unknown, deadline: AbortSignal): ModelFailure => {
    if (error instanceof ModelFailure) return error;
    if (deadline.aborted || error instanceof OpenAI.APIConnectionTimeoutError) {
      return new ModelFailure('timeout', `no answer within ${timeoutMs} ms`);
    }
    if (error instanceof OpenAI.RateLimitError) {
      const wait = Math.min(
        RATE_LIMIT_MAX_COOLDOWN_MS,
        retryAfterMs(error.headers, now()) ?? RATE_LIMIT_DEFAULT_COOLDOWN_MS,
      );
      coolUntil = now() + wait;
      return new ModelFailure('rate_limited', 'the model answered 429', Math.ceil(wait / 1000));
    }
    if (error instanceof OpenAI.APIConnectionError)
      return new ModelFailure('connection_error', 'the model server is unreachable');
    if (error instanceof OpenAI.APIError) {
      return (error.status ?? 0) >= 500
        ? new ModelFailure('upstream_error', `the model answered ${error.status}`)
        : new ModelFailure('request_refused', `the model answered ${error.status}`);
    }
    if (error instanceof SyntaxError)
      return new ModelFailure('malformed_response', 'the model answered malformed JSON');
    return new ModelFailure(
      'upstream_error',
      `the model call failed: ${(error as Error)?.message ?? String(error)}`,
    );
  };

  return {
    name: options.model,
    async complete(request) {
      const wait = coolUntil - now();
      if (wait > 0) {
        throw new ModelFailure(
          'cooling_down',
          'the model rate-limited an earlier call',
          Math.ceil(wait / 1000),
        );
      }
      // The SDK's timeout stops waiting for headers; this deadline also covers a body that stalls.
      const deadline = AbortSignal.timeout(Math.max(1, Math.ceil(timeoutMs)));
      const signal = request.signal ? AbortSignal.any([deadline, request.signal]) : deadline;
      let raw: unknown;
      try {
        raw = await client.chat.completions.create(
          {
            model: options.model,
            messages: request.messages,
            max_tokens: options.maxTokens ?? LANGUAGE_MODEL_DEFAULTS.maxTokens,
            temperature: options.temperature ?? LANGUAGE_MODEL_DEFAULTS.temperature,
            ...(request.tools ? { tools: request.tools } : {}),
          },
          { signal },
        );
      } catch (error) {
        throw toFailure(error, deadline);
      }
      const parsed = CompletionShape.safeParse(raw);
      if (!parsed.success) throw new ModelFailure('malformed_response', 'the reply is not a chat completion');
      const message = parsed.data.choices[0]!.message;
      return {
        content: message.content ?? null,
        toolCalls: (message.tool_calls ?? []).map((c) => ({
          id: c.id,
          name: c.function.name,
          arguments: c.function.arguments,
        })),
      };
    },
  };
}
