import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseConfig } from '../../src/config/load.js';

describe('deploy/config.example.yaml', () => {
  it('is a valid configuration: every documented key is accepted', () => {
    const doc = parse(readFileSync(new URL('../../deploy/config.example.yaml', import.meta.url), 'utf8')) as Record<string, unknown>;
    const config = parseConfig(doc);
    expect(config.servers![0]!.name).toBe('wse-1');
    expect(config.collectors.stream).toEqual({ enabled: true, interval: 30_000 });
  });
});
