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

describe('the connection cap when every connection is busy', () => {
  it('closes the one whose request ran longest past 10 s (a reader that never reads), else refuses the newcomer', { timeout: 30_000 }, async () => {
    const { createServer } = await import('node:http');
    const { connect } = await import('node:net');
    const { ConnectionCap, STALLED_MS } = await import('../../src/http/connection-cap.js');
    let now = 1_000_000;
    const shed: string[] = [];
    const cap = new ConnectionCap(2, (r) => shed.push(r), () => now);
    const server = createServer(() => undefined); // answers nothing: every request stays under way
    cap.attach(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as import('node:net').AddressInfo).port;
    const open = async (request: boolean) => {
      const s = connect(port, '127.0.0.1');
      const closed = new Promise<void>((r) => s.once('close', () => r()));
      s.on('error', () => undefined);
      await new Promise((r) => s.once('connect', r));
      if (request) s.write('GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n');
      return { s, closed };
    };
    const until = async (what: () => boolean) => {
      for (let i = 0; !what(); i++) {
        if (i > 500) throw new Error(`gave up waiting: ${String(what)} (open ${cap.size}, shed ${shed.join(',')})`);
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    try {
      const a = await open(true);
      await until(() => cap.size === 1);
      await new Promise((r) => setTimeout(r, 50)); // its request read by the server
      now += 1000;
      const b = await open(true);
      await until(() => cap.size === 2);
      await new Promise((r) => setTimeout(r, 50)); // both requests read by the server
      // Both busy, neither stalled yet: the newcomer is refused.
      const c = await open(false);
      await c.closed;
      expect(shed).toEqual(['refused']);
      // Past STALLED_MS for the older one: it makes room for the newcomer's request, the newcomer stays.
      now += STALLED_MS;
      const d = await open(true);
      await a.closed;
      expect(shed).toEqual(['refused', 'stalled']);
      expect(d.s.destroyed).toBe(false);
      for (const x of [b, d]) x.s.destroy();
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
