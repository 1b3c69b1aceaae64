import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { matchFiles, readTargetFile } from '../../src/config/servers-files.js';
import { hashmod, inShard, parseShard } from '../../src/config/shard.js';
import { addServerLabels, formatServerLabels } from '../../src/metrics/server-labels.js';

const dir = mkdtempSync(join(tmpdir(), 'wowza-fleet-unit-'));
const file = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};
const modules = new Set(['default', 'edge']);

describe('target files', () => {
  it('reads YAML and JSON lists of targets, with the default module and labels', () => {
    const y = readTargetFile(file('a.yaml', '- targets: [wowza-1:8087, "https://wowza-2:8089"]\n  labels: {site: a}\n'), modules);
    expect(y).toEqual([{ file: join(dir, 'a.yaml'), targets: ['http://wowza-1:8087', 'https://wowza-2:8089'], module: 'default', labels: { site: 'a' } }]);
    const j = readTargetFile(file('b.json', JSON.stringify([{ targets: ['http://wowza-3:8087'], module: 'edge' }])), modules);
    expect(j[0]).toMatchObject({ module: 'edge', labels: {} });
    expect(readTargetFile(file('empty.yaml', ''), modules)).toEqual([]);
    // A path is the API's base behind a reverse proxy: kept (without a trailing slash), never dropped.
    expect(readTargetFile(file('path.yaml', '- targets: ["https://proxy:443/wowza-7/", proxy/wowza-8]\n'), modules)[0]!.targets).toEqual(['https://proxy/wowza-7', 'http://proxy/wowza-8']);
    const e = readTargetFile(file('c.yaml', '- targets: [w:8087]\n  expected_streams: [live/cam1, live/backup/cam2]\n'), modules);
    expect(e[0]!.expectedStreams).toEqual([
      { application: 'live', appInstance: '_definst_', stream: 'cam1' },
      { application: 'live', appInstance: 'backup', stream: 'cam2' },
    ]);
  });

  it('names the file and the field of what is wrong, and never shows credentials', () => {
    const cases: Array<[string, RegExp]> = [
      ['targets: [x]', /not-a-list\.yaml: .*must hold a list of \{targets, module, labels\}/],
      ['- targets: []', /\[0\]\.targets: list at least one target/],
      ['- targets: ["ftp://w:21"]', /\[0\]\.targets\[0\]: must be http or https/],
      ['- targets: ["http://admin:secret@w:8087"]', /\[0\]\.targets\[0\]: must not carry credentials/],
      ['- targets: ["http://w:8087/api?x=1"]', /\[0\]\.targets\[0\]: must not carry a query or fragment/],
      ['- targets: [w:8087]\n  module: nope', /\[0\]\.module: "nope" is not one of modules: \(default, edge\)/],
      ['- targets: [w:8087]\n  labels: {server: x}', /\[0\]\.labels\.server: .*"server" is a label the exporter sets itself/],
      ['- targets: [w:8087]\n  labels: {"1x": y}', /\[0\]\.labels\.1x: label names use letters/],
      ['- targets: [w:8087]\n  hosts: [x]', /\[0\]\.hosts: .*unrecognized|\[0\]: .*hosts/i],
      ['- targets: [w:8087\n', /not YAML or JSON/],
      ['- targets: [w:8087]\n  expected_streams: [cam1]', /\[0\]\.expected_streams\[0\]: "cam1" is not application\/stream/],
    ];
    for (const [text, expected] of cases) {
      const path = file('not-a-list.yaml', text);
      let message = '';
      try {
        readTargetFile(path, modules);
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message, text).toMatch(expected);
      expect(message).toContain(path);
      expect(message).not.toContain('secret');
    }
  });

  it('matches file-name globs in a literal directory', () => {
    const sub = mkdtempSync(join(tmpdir(), 'wowza-glob-'));
    for (const n of ['a.yaml', 'b.yaml', 'c.json', 'notes.txt']) writeFileSync(join(sub, n), '[]');
    expect(matchFiles([join(sub, '*.yaml'), join(sub, '?.json')]).map((p) => p.slice(sub.length + 1))).toEqual(['a.yaml', 'b.yaml', 'c.json']);
    expect(matchFiles([join(sub, 'missing', '*.yaml')])).toEqual([]);
  });
});

describe('shards', () => {
  it('reads i/N and refuses what cannot be a replica', () => {
    expect(parseShard('1/3')).toEqual({ index: 1, count: 3 });
    expect(() => parseShard('3/3')).toThrow(/index must be below the count/);
    expect(() => parseShard('one of two')).toThrow(/is not i\/N/);
  });

  it('N replicas take every name exactly once', () => {
    const names = Array.from({ length: 200 }, (_, i) => `wowza-${i}.example.net:8087`);
    for (const count of [1, 2, 3, 7]) {
      const taken = names.map((n) => Array.from({ length: count }, (_, index) => inShard(n, { index, count })).filter(Boolean).length);
      expect(taken.every((t) => t === 1), `count ${count}`).toBe(true);
    }
    expect(hashmod('wowza-1.example.net:8087', 1)).toBe(0);
  });
});

describe('a server\'s labels on its series', () => {
  it('are added to the lines of that server only, whatever the other label values hold', () => {
    const text = [
      '# HELP wowza_exporter_api_requests_total x',
      'wowza_exporter_api_requests_total{server="w:1",endpoint="/v2/servers/{server}/status",code="200"} 3',
      'wowza_up{server="w:2"} 1',
      'wowza_exporter_build_info{version="1"} 1',
      'wowza_exporter_servers 2',
    ].join('\n');
    const out = addServerLabels(text, new Map([['w:1', formatServerLabels({ site: 'a "quoted"' })]]));
    expect(out.split('\n')[1]).toBe('wowza_exporter_api_requests_total{server="w:1",endpoint="/v2/servers/{server}/status",code="200",site="a \\"quoted\\""} 3');
    expect(out.split('\n').slice(2)).toEqual(text.split('\n').slice(2));
  });
});
