import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** A response's head as it went over the wire, and its size. */
export interface ResponseHead {
  status: number;
  /** Bytes of the status line, the header lines and the blank line that ends the head (HTTP/1.1). */
  bytes: number;
  /** Header names (as sent) and values, in order. */
  rawHeaders: string[];
  /** One header, by case-insensitive name. */
  header(name: string): string | undefined;
}

/**
 * Sends one request and measures the response head, which proxies cap (nginx's default
 * `proxy_buffer_size` is 4 or 8 KB and a longer head answers 502). The body is read and dropped.
 *
 * @example
 * const head = await fetchResponseHead('http://127.0.0.1:3000/api/v1/fees/now');
 * expect(head.bytes).toBeLessThanOrEqual(4096);
 */
export function fetchResponseHead(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<ResponseHead> {
  const request = url.startsWith('https:') ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(url, { method: init.method ?? 'GET', headers: init.headers ?? {} }, (res) => {
      const statusLine = `HTTP/${res.httpVersion} ${res.statusCode} ${res.statusMessage}\r\n`;
      let bytes = Buffer.byteLength(statusLine, 'latin1') + 2;
      for (let i = 0; i < res.rawHeaders.length; i += 2) {
        bytes += Buffer.byteLength(`${res.rawHeaders[i]}: ${res.rawHeaders[i + 1]}\r\n`, 'latin1');
      }
      res.resume();
      res.on('error', reject);
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          bytes,
          rawHeaders: res.rawHeaders,
          header: (name) => {
            const value = res.headers[name.toLowerCase()];
            return Array.isArray(value) ? value.join(', ') : value;
          },
        }),
      );
    });
    req.on('error', reject);
    req.end(init.body);
  });
}
