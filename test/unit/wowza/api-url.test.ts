import { describe, expect, it } from 'vitest';
import { apiUrl } from '../../../src/wowza/api-url.js';

describe('apiUrl: a configured URL\'s path is the API base', () => {
  it.each([
    ['http://wowza:8087', 'http://wowza:8087/v2/servers/_defaultServer_/status'],
    ['http://wowza:8087/', 'http://wowza:8087/v2/servers/_defaultServer_/status'],
    ['https://proxy.example.net/wowza-7', 'https://proxy.example.net/wowza-7/v2/servers/_defaultServer_/status'],
    ['https://proxy.example.net/a/b//', 'https://proxy.example.net/a/b/v2/servers/_defaultServer_/status'],
  ])('%s', (base, expected) => {
    expect(apiUrl(base, '/v2/servers/_defaultServer_/status').toString()).toBe(expected);
  });

  it('keeps a query of the path and percent-encoded names as they are', () => {
    expect(apiUrl('http://proxy/w', '/v2/servers/s/vhosts/v/applications/live%2Fx/instances?flat').toString()).toBe('http://proxy/w/v2/servers/s/vhosts/v/applications/live%2Fx/instances?flat');
  });
});
