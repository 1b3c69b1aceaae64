import { describe, expect, it } from 'vitest';
import { targetUrlFor } from '../../../src/commands/webhooks.js';

describe('webhooks setup: the target URL of each server', () => {
  it('adds ?server=<name>, keeping the rest of the query', () => {
    expect(targetUrlFor('https://exporter.example.net:9935/webhooks/wowza?tenant=a', 'wse-1')).toBe('https://exporter.example.net:9935/webhooks/wowza?tenant=a&server=wse-1');
  });

  it('refuses a URL that already names a server, instead of replacing it silently (issue 45)', () => {
    expect(() => targetUrlFor('https://exporter.example.net/webhooks/wowza?server=x', 'wse-1')).toThrow(/--target-url: leave out "server=": each server's target gets \?server=<its name> \(here "wse-1"\)/);
  });

  it('refuses what is not an http(s) URL', () => {
    expect(() => targetUrlFor('ftp://x/y', 'wse-1')).toThrow(/http or https/);
    expect(() => targetUrlFor('not a url', 'wse-1')).toThrow(/not a URL/);
  });
});
