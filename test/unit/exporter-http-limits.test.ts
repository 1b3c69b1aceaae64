import { describe, expect, it } from 'vitest';
import { hostOfHeader, normaliseHost } from '../../src/http/allowed-hosts.js';
import { maxConnectionsFor, openFileLimit } from '../../src/http/connection-cap.js';

describe('Host headers', () => {
  it.each([
    ['evil.example', 'evil.example'],
    ['Evil.Example:9935', 'evil.example'],
    ['exporter.example.', 'exporter.example'],
    ['127.0.0.1:9935', '127.0.0.1'],
    ['[::1]:9935', '::1'],
    ['[::1]', '::1'],
  ])('%s is the host %s', (header, host) => expect(hostOfHeader(header)).toBe(host));

  it.each(['', ':9935', '::1', 'a:b:c', '[evil.example]:1', 'evil.example:99999x'])('%j is malformed', (header) => expect(hostOfHeader(header)).toBeUndefined());

  it('configured names compare like headers', () => {
    expect(normaliseHost('[::1]')).toBe('::1');
    expect(normaliseHost(' Exporter.Example. ')).toBe('exporter.example');
  });
});

describe('the default connection cap', () => {
  it('is half the open-file limit, from 16 to 1024, and 256 when the limit is unknown', () => {
    expect(maxConnectionsFor(512)).toBe(256);
    expect(maxConnectionsFor(1024)).toBe(512);
    expect(maxConnectionsFor(1_048_576)).toBe(1024);
    expect(maxConnectionsFor(20)).toBe(16);
    expect(maxConnectionsFor(undefined)).toBe(256);
  });

  it('reads the soft limit from /proc/self/limits', () => {
    const limits = 'Limit                     Soft Limit           Hard Limit           Units\nMax open files            512                  4096                 files\n';
    expect(openFileLimit(() => limits)).toBe(512);
    expect(openFileLimit(() => limits.replace('512 ', 'unlimited '))).toBeUndefined();
    expect(openFileLimit(() => {
      throw new Error('ENOENT');
    })).toBeUndefined();
  });
});
