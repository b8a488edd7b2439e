// Generated raw HTTP/1.1 requests for the request fuzz (test/fuzz-requests.test.ts): odd methods,
// absolute-form, asterisk and malformed targets, encoded and dot-segment paths, fragments, odd
// queries, bad and half-valid payment headers, odd headers and bodies. Built with fast-check from a
// seed, so a failing request can be generated again; sent on real sockets with a bounded pool.
import fc from 'fast-check';
import { type RawResponse, sendRaw } from './target-apps';

/** What a server under fuzz offers the generator. */
export interface FuzzTarget {
  name: string;
  port: number;
  /** Paths it serves (`:param` segments are filled in by the generator). */
  paths: readonly string[];
  /** Valid payment header values it would accept (the scripted facilitator's), if any. */
  payments?: readonly string[];
  /** A real challenge's `accepted` requirements, to build payloads that decode but are not signed. */
  requirements?: readonly Record<string, unknown>[];
}

export interface FuzzRequest {
  /** Index of the target in the list given to the generator. */
  target: number;
  method: string;
  requestTarget: string;
  headers: Array<[string, string]>;
  body: Buffer;
}

const b64 = (value: unknown) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64');

const METHODS = ['GET', 'GET', 'GET', 'HEAD', 'POST', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE'];
const HOSTS = [
  '127.0.0.1',
  'localhost',
  'api.example',
  'user:pw@h.example',
  '[::1]',
  'h:99999',
  'x.example:80',
  '',
];

/** Characters a path segment may carry in the fuzz: the odd ones are the point. */
const SEGMENT_TRICKS = [
  '.',
  '..',
  '%2e',
  '%2e%2e',
  '%2E%2e',
  '%252e%252e',
  '%2f',
  '%5c',
  '%zz',
  '%',
  '%00',
  '%E0%A4%A',
  'é',
  '%C3%A9',
  ';x=1',
  '',
  '~',
  '*',
  'a'.repeat(300),
];

function fillParams(path: string): fc.Arbitrary<string> {
  const parts = path.split('/');
  return fc
    .tuple(
      ...parts.map((part) =>
        part.startsWith(':')
          ? fc.oneof(
              fc.constantFrom('0', 'abc', 'f'.repeat(64), '840000'),
              fc.stringMatching(/^[A-Za-z0-9%._~-]{0,70}$/),
            )
          : fc.constant(part),
      ),
    )
    .map((filled) => filled.join('/'));
}

function mutatePath(path: string): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant(path) },
    { weight: 1, arbitrary: fc.constant(path.toUpperCase()) },
    { weight: 1, arbitrary: fc.constant(`${path}/`) },
    { weight: 1, arbitrary: fc.constant(path.replaceAll('/', '//')) },
    { weight: 1, arbitrary: fc.constant(path.replaceAll('/', '\\')) },
    {
      weight: 3,
      arbitrary: fc.tuple(fc.nat(), fc.constantFrom(...SEGMENT_TRICKS)).map(([at, trick]) => {
        const segments = path.split('/');
        segments.splice(1 + (at % Math.max(1, segments.length)), 0, trick);
        return segments.join('/');
      }),
    },
    {
      weight: 2,
      // Percent-encode some characters of the path (once or twice).
      arbitrary: fc.tuple(fc.nat(), fc.boolean()).map(([seed, twice]) =>
        [...path]
          .map((char, i) => {
            if (char === '/' || (seed + i) % 3 !== 0) return char;
            const once = `%${char.charCodeAt(0).toString(16).padStart(2, '0')}`;
            return twice ? once.replace('%', '%25') : once;
          })
          .join(''),
      ),
    },
    {
      weight: 1,
      arbitrary: fc.stringMatching(/^\/[ -~]{0,40}$/).map((junk) => `${path}${junk.replace(/[ #?]/g, '')}`),
    },
  );
}

const query = fc.oneof(
  { weight: 5, arbitrary: fc.constant('') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '?',
      '?x=1',
      '?a=1&a=2',
      '?%zz=%',
      '?limit=-1&offset=abc',
      '?q=%00',
      '?==&&',
      `?${'q='.repeat(200)}`,
    ),
  },
  { weight: 2, arbitrary: fc.stringMatching(/^[A-Za-z0-9=&%+._~-]{0,60}$/).map((q) => `?${q}`) },
);
const fragment = fc.oneof(
  { weight: 6, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: fc.constantFrom('#', '#x', '#/../api', '#%zz') },
);

function requestTarget(paths: readonly string[]): fc.Arbitrary<string> {
  const path = fc
    .constantFrom(...paths)
    .chain(fillParams)
    .chain(mutatePath);
  const origin = fc.tuple(path, query, fragment).map(([p, q, f]) => `${p}${q}${f}`);
  return fc.oneof(
    { weight: 6, arbitrary: origin },
    // Absolute-form, the scheme in any case, the authority odd at times.
    {
      weight: 3,
      arbitrary: fc
        .tuple(fc.constantFrom('http', 'https', 'HTTP', 'ftp'), fc.constantFrom(...HOSTS), origin)
        .map(([scheme, host, rest]) => `${scheme}://${host}${rest}`),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '*',
        'http://h',
        'http://h?x=1',
        'http:///healthz',
        'api/v1/fees/now',
        '/',
        '//',
        '/..',
        '/%',
        'http://h/%zz#',
      ),
    },
  );
}

function paymentValue(target: FuzzTarget): fc.Arbitrary<string> {
  const decodes = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }).map(b64),
    fc.constant(b64({ x402Version: 2 })),
    fc.constant(b64({ x402Version: 1, scheme: 'exact', network: 'base', payload: {} })),
    fc.constant(b64({ x402Version: 2, accepted: {}, payload: { signature: '0x', authorization: {} } })),
    fc.constant(b64('null')),
  );
  const unsigned = (target.requirements ?? []).length
    ? fc
        .tuple(
          fc.constantFrom(...target.requirements!),
          fc.constantFrom('0x', `0x${'ab'.repeat(65)}`, 'nope'),
        )
        .map(([accepted, signature]) =>
          b64({
            x402Version: 2,
            resource: { url: 'http://x/' },
            accepted,
            payload: {
              signature,
              authorization: {
                from: `0x${'1'.repeat(40)}`,
                to: accepted['payTo'],
                value: accepted['amount'],
                validAfter: '0',
                validBefore: '99999999999',
                nonce: `0x${'0'.repeat(64)}`,
              },
            },
          }),
        )
    : decodes;
  return fc.oneof(
    fc.stringMatching(/^[A-Za-z0-9+/=._-]{0,200}$/),
    decodes,
    unsigned,
    fc.constantFrom('', ' ', '=', 'e30=', 'bnVsbA==', 'W10=', '%%%', 'a'.repeat(20_000)),
    ...(target.payments?.length ? [fc.constantFrom(...target.payments)] : []),
  );
}

const headerValue = fc.stringMatching(/^[\t -~]{0,80}$/).map((value) => value.trim());

function headers(target: FuzzTarget): fc.Arbitrary<Array<[string, string]>> {
  const one = fc.oneof(
    { weight: 4, arbitrary: paymentValue(target).map((v): [string, string] => ['PAYMENT-SIGNATURE', v]) },
    { weight: 2, arbitrary: paymentValue(target).map((v): [string, string] => ['X-PAYMENT', v]) },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom(
          'application/json',
          'text/html',
          '*/*',
          'text/html,application/xhtml+xml',
          'garbage/;;',
          '',
        )
        .map((v): [string, string] => ['Accept', v]),
    },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom(
          'application/json',
          'text/plain',
          'application/json; charset=latin1',
          'multipart/form-data; boundary=x',
          'x/y',
          '',
        )
        .map((v): [string, string] => ['Content-Type', v]),
    },
    {
      weight: 1,
      arbitrary: fc
        .oneof(headerValue, fc.constant('x'.repeat(300)))
        .map((v): [string, string] => ['X-Request-Id', v]),
    },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom('https://app.example', 'null', 'http://127.0.0.1', '')
        .map((v): [string, string] => ['Origin', v]),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('GET', 'PUT', 'x')
        .map((v): [string, string] => ['Access-Control-Request-Method', v]),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('PAYMENT-SIGNATURE', 'x-payment, content-type', '*')
        .map((v): [string, string] => ['Access-Control-Request-Headers', v]),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('"x"', '*', 'W/"abc"', '')
        .map((v): [string, string] => ['If-None-Match', v]),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('bytes=0-1', 'bytes=x', 'bytes=5-1')
        .map((v): [string, string] => ['Range', v]),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('gzip', 'br, deflate', '*;q=0', 'identity;q=0')
        .map((v): [string, string] => ['Accept-Encoding', v]),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('1.2.3.4', 'garbage', '::1, 10.0.0.1')
        .map((v): [string, string] => ['X-Forwarded-For', v]),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('evil.example', '', 'a b')
        .map((v): [string, string] => ['X-Forwarded-Host', v]),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('https', 'gopher', '')
        .map((v): [string, string] => ['X-Forwarded-Proto', v]),
    },
    { weight: 1, arbitrary: fc.tuple(fc.stringMatching(/^X-[A-Za-z0-9-]{1,20}$/), headerValue) },
  );
  return fc.array(one, { maxLength: 6 });
}

const body = fc.oneof(
  { weight: 5, arbitrary: fc.constant(Buffer.alloc(0)) },
  {
    weight: 2,
    arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => Buffer.from(JSON.stringify(value) ?? 'null')),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('{', '{"tx":', 'null', '[]', '{"hex":"zz"}', '\u0000')
      .map((text) => Buffer.from(text)),
  },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 256 }).map((bytes) => Buffer.from(bytes)) },
);

/** The request arbitrary for a list of targets. */
export function fuzzRequests(targets: readonly FuzzTarget[]): fc.Arbitrary<FuzzRequest> {
  return fc.nat({ max: targets.length - 1 }).chain((index) => {
    const target = targets[index]!;
    return fc
      .record({
        method: fc.oneof(
          { weight: 9, arbitrary: fc.constantFrom(...METHODS) },
          { weight: 1, arbitrary: fc.stringMatching(/^[A-Z]{1,12}$/) },
        ),
        requestTarget: requestTarget(target.paths),
        headers: headers(target),
        body,
      })
      .map((request) => ({ target: index, ...request }));
  });
}

/** The request's bytes: request line, Host, the generated headers, Connection: close, body. */
export function encodeRequest(request: FuzzRequest, port: number): Buffer {
  const lines = [`${request.method} ${request.requestTarget} HTTP/1.1`, `Host: 127.0.0.1:${port}`];
  for (const [name, value] of request.headers) lines.push(`${name}: ${value}`);
  lines.push('Connection: close');
  if (request.body.length > 0 || ['POST', 'PUT', 'PATCH'].includes(request.method))
    lines.push(`Content-Length: ${request.body.length}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), request.body]);
}

export interface FuzzOutcome {
  request: FuzzRequest;
  response: RawResponse;
  /** Wall time from connecting to the server closing the connection. */
  ms: number;
}

/** Sends every request to its target, `concurrency` at a time; resolves with every outcome. */
export async function sendAll(
  requests: readonly FuzzRequest[],
  targets: readonly FuzzTarget[],
  concurrency: number,
): Promise<FuzzOutcome[]> {
  const outcomes: FuzzOutcome[] = new Array(requests.length);
  let next = 0;
  const worker = async () => {
    while (next < requests.length) {
      const index = next++;
      const request = requests[index]!;
      const port = targets[request.target]!.port;
      const started = performance.now();
      outcomes[index] = {
        request,
        response: await sendRaw(port, encodeRequest(request, port)),
        ms: performance.now() - started,
      };
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return outcomes;
}

/** One line describing a request, for failure messages. */
export function describeRequest(request: FuzzRequest, targets: readonly FuzzTarget[]): string {
  const headers = request.headers.map(
    ([name, value]) => `${name}: ${value.length > 60 ? `${value.slice(0, 60)}…(${value.length})` : value}`,
  );
  return `${targets[request.target]!.name}: ${request.method} ${request.requestTarget.slice(0, 120)} [${headers.join(' | ')}] body ${request.body.length} B`;
}
