import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseLedgerUrl, redactLedgerUrl } from './ledger-url';

describe('parseLedgerUrl', () => {
  it.each([
    ['sqlite:./data/ledger.db', { kind: 'sqlite', filename: resolve('data/ledger.db') }],
    ['sqlite:/var/lib/ledger.db', { kind: 'sqlite', filename: '/var/lib/ledger.db' }],
    ['sqlite:///var/lib/ledger.db', { kind: 'sqlite', filename: '/var/lib/ledger.db' }],
    ['sqlite:ledger.db?table=paid', { kind: 'sqlite', filename: resolve('ledger.db'), tableName: 'paid' }],
    ['file:///tmp/a%20b.db', { kind: 'sqlite', filename: '/tmp/a b.db' }],
    ['./ledger.db', { kind: 'sqlite', filename: resolve('ledger.db') }],
    ['/abs/ledger.db', { kind: 'sqlite', filename: '/abs/ledger.db' }],
    ['redis://127.0.0.1:6379', { kind: 'redis', url: 'redis://127.0.0.1:6379' }],
    [
      'rediss://u:p@cache:6380/2?prefix=shop:ledger:',
      { kind: 'redis', url: 'rediss://u:p@cache:6380/2', keyPrefix: 'shop:ledger:' },
    ],
    [
      'postgres://postgres@127.0.0.1:5432/test?schema=pay&table=entries&sslmode=disable',
      {
        kind: 'postgres',
        connectionString: 'postgres://postgres@127.0.0.1:5432/test?sslmode=disable',
        schema: 'pay',
        tableName: 'entries',
      },
    ],
    ['postgresql://db/test', { kind: 'postgres', connectionString: 'postgresql://db/test' }],
  ])('parses %s', (url, expected) => {
    expect(parseLedgerUrl(url)).toEqual(expected);
  });

  it.each([
    ['', /no ledger URL given/],
    ['   ', /no ledger URL given/],
    ['mysql://db/x', /unsupported ledger URL scheme "mysql:"/],
    ['http://example.com/ledger', /unsupported ledger URL scheme "http:"/],
    ['sqlite:', /no file path/],
    ['sqlite:x.db?tabel=y', /unknown SQLite parameter "tabel"/],
    ['redis://host?prefix=', /prefix parameter is empty/],
    ['postgres://[bad', /not a valid URL/],
  ])('refuses %j with a clear message and the supported forms', (url, message) => {
    expect(() => parseLedgerUrl(url)).toThrow(message);
    expect(() => parseLedgerUrl(url)).toThrow(
      /Supported ledger URLs:[\s\S]*sqlite:[\s\S]*redis:[\s\S]*postgres:/,
    );
  });

  it('throws a TollboothError with code invalid_config', () => {
    expect(() => parseLedgerUrl('ftp://x')).toThrow(expect.objectContaining({ code: 'invalid_config' }));
  });
});

describe('redactLedgerUrl', () => {
  it('hides the password of a server URL', () => {
    expect(redactLedgerUrl('postgres://app:s3cret@db:5432/x')).toBe('postgres://app:***@db:5432/x');
    expect(redactLedgerUrl('redis://:s3cret@cache:6379')).toBe('redis://:***@cache:6379');
  });

  it('hides every query parameter that names a credential, and keeps the others', () => {
    expect(redactLedgerUrl('postgres://app@db/x?password=s3cret&schema=pay&sslkey=/k.pem')).toBe(
      'postgres://app@db/x?password=***&schema=pay&sslkey=***',
    );
    expect(redactLedgerUrl('rediss://cache:6380/2?prefix=t:&authToken=abc&PASS=x')).toBe(
      'rediss://cache:6380/2?prefix=t%3A&authToken=***&PASS=***',
    );
  });

  it('masks a text that is not a URL by pattern', () => {
    expect(redactLedgerUrl('redis://app:s3cret@[bad/?password=p&db=1')).toBe(
      'redis://app:***@[bad/?password=***&db=1',
    );
  });

  it('leaves SQLite URLs as they are (no credentials)', () => {
    expect(redactLedgerUrl('sqlite:./ledger.db?table=t')).toBe('sqlite:./ledger.db?table=t');
  });
});
