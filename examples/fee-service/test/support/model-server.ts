import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local HTTP server that speaks OpenAI's chat-completions wire format, standing in for a hosted
 * model that cannot run here. It reproduces the behaviours a real one shows: grounded prose, tool
 * calls, 429 with `retry-after` and OpenAI's error body, 500, a request that never answers,
 * malformed JSON, an empty reply, and prose that invents a number.
 */
export type ModelBehaviour =
  | 'grounded'
  | 'tools'
  | 'rate_limit'
  | 'server_error'
  | 'hang'
  | 'malformed'
  | 'empty'
  | 'invent';

/** A number that no fact in the tests contains, so prose stating it is ungrounded. */
export const INVENTED_NUMBER = '987,654.321';

export interface RecordedModelRequest {
  path: string;
  authorization: string | undefined;
  body: {
    model: string;
    messages: { role: string; content?: string | null; tool_calls?: unknown[]; tool_call_id?: string }[];
    tools?: { type: string; function: { name: string; description?: string; parameters?: unknown } }[];
    max_tokens?: number;
  };
}

export interface TestModelServer {
  /** Base URL to configure, ending in `/v1`. */
  baseUrl: string;
  /** Every chat-completions request, in order. */
  requests: RecordedModelRequest[];
  /** Behaviour for requests with nothing queued. */
  setBehaviour(behaviour: ModelBehaviour): void;
  /** Behaviours for the next requests, one each. */
  enqueue(...behaviours: ModelBehaviour[]): void;
  /** Seconds sent in `retry-after` with a 429. Default 30. */
  retryAfterSeconds: number;
  close(): Promise<void>;
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    'x-request-id': `req_${randomUUID().replace(/-/g, '')}`,
    'openai-processing-ms': '42',
    ...headers,
  });
  res.end(text);
};

const completion = (model: string, message: Record<string, unknown>, finish: 'stop' | 'tool_calls') => ({
  id: `chatcmpl-${randomUUID().replace(/-/g, '').slice(0, 24)}`,
  object: 'chat.completion',
  created: Math.floor(Date.now() / 1000),
  model,
  choices: [
    {
      index: 0,
      message: { role: 'assistant', refusal: null, annotations: [], ...message },
      logprobs: null,
      finish_reason: finish,
    },
  ],
  usage: { prompt_tokens: 812, completion_tokens: 64, total_tokens: 876 },
  system_fingerprint: 'fp_test',
});

/** The numeric leaves of the JSON after `FACTS:` (or of the tool results), first ones first. */
function factNumbers(request: RecordedModelRequest['body']): number[] {
  const out: number[] = [];
  const walk = (v: unknown) => {
    if (typeof v === 'number' && Number.isFinite(v)) out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  for (const m of request.messages) {
    const content = m.content ?? '';
    const facts = /FACTS: (.*)$/m.exec(content)?.[1] ?? (m.role === 'tool' ? content : undefined);
    if (facts === undefined) continue;
    try {
      walk(JSON.parse(facts));
    } catch {
      // not JSON: no numbers from it
    }
  }
  return out;
}

/** Prose a careful model would write: it restates three figures from the facts. */
function groundedProse(request: RecordedModelRequest['body']): string {
  const numbers = factNumbers(request).filter((n) => n > 1);
  const picked = numbers.slice(0, 3).map((n) => n.toLocaleString('en-US', { maximumFractionDigits: 3 }));
  return picked.length === 0
    ? 'In plain words: the figures above describe the current state of the fee market.'
    : `In plain words from the test model: the key figures are ${picked.join(', ')}, as the facts show.`;
}

/** Tool calls for every offered tool named in the question (or the first offered tool). */
function toolCalls(request: RecordedModelRequest['body']) {
  // The question the model is asked, not the facts beside it (which name steps too).
  const user = request.messages.find((m) => m.role === 'user')?.content ?? '';
  const question = (/^QUESTION: (.*)$/m.exec(user)?.[1] ?? user).toLowerCase();
  const tools = request.tools ?? [];
  const wanted = tools.filter((t) => question.includes(t.function.name.replace(/_/g, ' ')));
  const chosen = wanted.length > 0 ? wanted : tools.slice(0, 1);
  // Required string arguments (a txid, a block) are filled from a 64-hex the question holds.
  const target = /\b[0-9a-f]{64}\b/i.exec(question)?.[0];
  return chosen.map((t, i) => {
    const required = ((t.function.parameters as { required?: string[] } | undefined)?.required ??
      []) as string[];
    const args = Object.fromEntries(required.map((name) => [name, target ?? '']));
    return {
      id: `call_${i}_${t.function.name}`,
      type: 'function',
      function: { name: t.function.name, arguments: JSON.stringify(args) },
    };
  });
}

function answer(
  behaviour: ModelBehaviour,
  body: RecordedModelRequest['body'],
  res: ServerResponse,
  server: TestModelServer,
) {
  switch (behaviour) {
    case 'rate_limit':
      return json(
        res,
        429,
        {
          error: {
            message: `Rate limit reached for ${body.model} on requests per min (RPM): Limit 3, Used 3, Requested 1.`,
            type: 'requests',
            param: null,
            code: 'rate_limit_exceeded',
          },
        },
        { 'retry-after': String(server.retryAfterSeconds), 'x-ratelimit-remaining-requests': '0' },
      );
    case 'server_error':
      return json(res, 500, {
        error: {
          message: 'The server had an error while processing your request. Sorry about that!',
          type: 'server_error',
          param: null,
          code: null,
        },
      });
    case 'hang':
      // Headers never come; the client's deadline has to end it.
      return;
    case 'malformed':
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(
        '{"id":"chatcmpl-x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Fees ar',
      );
    case 'empty':
      return json(res, 200, completion(body.model, { content: '' }, 'stop'));
    case 'invent':
      return json(
        res,
        200,
        completion(
          body.model,
          { content: `Fees are ${INVENTED_NUMBER} sat/vB today, which is unusual.` },
          'stop',
        ),
      );
    case 'tools': {
      const answered = body.messages.some((m) => m.role === 'tool');
      if (!answered && (body.tools?.length ?? 0) > 0) {
        return json(
          res,
          200,
          completion(body.model, { content: null, tool_calls: toolCalls(body) }, 'tool_calls'),
        );
      }
      return json(res, 200, completion(body.model, { content: groundedProse(body) }, 'stop'));
    }
    case 'grounded':
      return json(res, 200, completion(body.model, { content: groundedProse(body) }, 'stop'));
  }
}

/** Starts the server on a free loopback port. */
export async function startTestModelServer(options: { model?: string } = {}): Promise<TestModelServer> {
  const queue: ModelBehaviour[] = [];
  let fallback: ModelBehaviour = 'grounded';
  const hanging = new Set<ServerResponse>();
  const api: TestModelServer = {
    baseUrl: '',
    requests: [],
    retryAfterSeconds: 30,
    setBehaviour: (b) => {
      fallback = b;
    },
    enqueue: (...b) => {
      queue.push(...b);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0]!;
      if (req.method === 'GET' && path === '/v1/models') {
        return json(res, 200, {
          object: 'list',
          data: [
            { id: options.model ?? 'test-model', object: 'model', created: 0, owned_by: 'tollbooth-tests' },
          ],
        });
      }
      if (req.method !== 'POST' || path !== '/v1/chat/completions') {
        return json(res, 404, {
          error: {
            message: `Invalid URL (${req.method} ${path})`,
            type: 'invalid_request_error',
            param: null,
            code: null,
          },
        });
      }
      let body: RecordedModelRequest['body'];
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return json(res, 400, {
          error: {
            message: 'We could not parse the JSON body of your request.',
            type: 'invalid_request_error',
            param: null,
            code: null,
          },
        });
      }
      api.requests.push({ path, authorization: req.headers.authorization, body });
      const behaviour = queue.shift() ?? fallback;
      if (behaviour === 'hang') {
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
      }
      answer(behaviour, body, res, api);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  api.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return api;
}
