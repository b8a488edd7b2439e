// A route's 402 is made once and written again for every request (the match, the challenge and its
// text kept): the bytes on the wire stay those of the challenge, the same for every request on the
// three adapters, the request id aside; a target the table was never asked about is matched fresh.
import { knownBodyText } from '@tollbooth/core/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type RawResponse,
  rawRequest,
  sendRaw,
  startTargetApps,
  type TargetApp,
} from './support/target-apps';

let apps: TargetApp[];

beforeAll(async () => {
  apps = await startTargetApps();
});
afterAll(async () => {
  await Promise.all(apps?.map((app) => app.close()) ?? []);
});

/** The head without its date and request id, which change per request. */
const stable = (answer: RawResponse) =>
  answer.head
    .split('\r\n')
    .filter((line) => !/^(date|x-request-id):/i.test(line))
    .join('\r\n');

describe('the 402 across requests', () => {
  it('writes the challenge byte for byte, the same head and body for every request, on every adapter', async () => {
    for (const app of apps) {
      const answers: RawResponse[] = [];
      for (let i = 0; i < 3; i++)
        answers.push(
          await sendRaw(app.port, rawRequest('GET', '/api/paid', app.port, [`X-Request-Id: r-${i}`])),
        );
      const match = app.gate.routes.match('GET', `http://127.0.0.1:${app.port}/api/paid`)!;
      const challenge = match.route.challenge(match.resourceUrl);
      const text = Buffer.from(challenge.body).toString('latin1');
      expect(knownBodyText(challenge.body)).toBe(text);
      answers.forEach((answer, i) => {
        expect(answer.status, app.name).toBe(402);
        expect(answer.body, app.name).toBe(text);
        expect(answer.headers['payment-required'], app.name).toBe(challenge.header);
        expect(answer.headers['content-length'], app.name).toBe(String(challenge.body.byteLength));
        expect(answer.headers['x-request-id'], app.name).toBe(`r-${i}`);
        expect(stable(answer), app.name).toBe(stable(answers[0]!));
      });
    }
  });

  it('challenges a paid path first asked about with another query or case, and passes a free one', async () => {
    for (const app of apps) {
      const first = await sendRaw(app.port, rawRequest('GET', '/api/priced/a?x=1', app.port));
      const again = await sendRaw(app.port, rawRequest('GET', '/api/priced/a?x=2', app.port));
      expect([first.status, again.status], app.name).toEqual([402, 402]);
      expect(JSON.parse(again.body).resource.url, app.name).toBe(JSON.parse(first.body).resource.url);
      expect((await sendRaw(app.port, rawRequest('GET', '/api/free', app.port))).status, app.name).toBe(200);
      expect((await sendRaw(app.port, rawRequest('GET', '/api/free', app.port))).status, app.name).toBe(200);
    }
  });
});
