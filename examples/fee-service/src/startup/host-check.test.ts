import { describe, expect, it } from 'vitest';
import { createHostCheck, VALID_HOSTS_KEPT } from './http-server';

describe('createHostCheck', () => {
  it('accepts an authority and refuses what is none, asked once or many times', () => {
    const hosts = createHostCheck();
    for (let round = 0; round < 3; round++) {
      expect(hosts.valid('api.example.com')).toBe(true);
      expect(hosts.valid('127.0.0.1:3000')).toBe(true);
      expect(hosts.valid('[::1]:8080')).toBe(true);
      expect(hosts.valid('h:99999')).toBe(false);
      expect(hosts.valid('a b')).toBe(false);
    }
  });

  it('stays right past the number of hosts it keeps', () => {
    const hosts = createHostCheck();
    for (let i = 0; i <= VALID_HOSTS_KEPT * 2; i++)
      expect(hosts.valid(`h${i}.example:${1000 + i}`)).toBe(true);
    expect(hosts.valid('h0.example:1000')).toBe(true);
    expect(hosts.valid('h0.example:100000')).toBe(false);
  });
});
