import { describe, expect, it } from 'vitest';
import { createEsploraClient } from './esplora';
import { publicUrl } from './http';
import { createMempoolSpaceClient } from './mempool-space';

describe('published upstream addresses', () => {
  it.each([
    ['https://user:secret@mempool.example/api/?key=abc#frag', 'https://mempool.example/api'],
    ['https://mempool.example/?apikey=abc', 'https://mempool.example'],
    ['http://127.0.0.1:8999', 'http://127.0.0.1:8999'],
  ])('publishes %s as %s: no credentials, query or fragment', (url, published) => {
    expect(publicUrl(url)).toBe(published);
  });

  it('leaves credentials and query strings out of every client source', () => {
    const secret = /secret|key=|apikey/;
    expect(createMempoolSpaceClient({ baseUrl: 'https://u:secret@m.example/?apikey=1' }).source).not.toMatch(
      secret,
    );
    expect(createEsploraClient({ baseUrl: 'https://u:secret@e.example/api?key=1' }).source).not.toMatch(
      secret,
    );
  });
});
