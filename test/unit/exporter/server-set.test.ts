import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, type RuntimeConfig } from '../../../src/config/load.js';
import { ConnectionCountsFinder } from '../../../src/exporter/connection-counts-finder.js';
import { ServerSet } from '../../../src/exporter/server-set.js';
import { silentLogger, type Logger } from '../../../src/base/logger.js';
import type { WowzaTarget } from '../../../src/wowza/client.js';

const dir = mkdtempSync(join(tmpdir(), 'server-set-'));
let n = 0;
function runtimeOf(yaml: string): RuntimeConfig {
  const path = join(dir, `config-${n++}.yaml`);
  writeFileSync(path, yaml, { mode: 0o600 });
  return loadConfig({ config: path }, {});
}

/** A server set over a configuration that can be swapped, recording what it starts and stops. */
function harness(yaml: string, opts: { detect?: (t: WowzaTarget) => Promise<string | undefined>; logger?: Logger } = {}) {
  const state = { runtime: runtimeOf(yaml) };
  const events: string[] = [];
  const counts: number[] = [];
  const fileErrors: string[] = [];
  const logger = opts.logger ?? silentLogger();
  const finder = new ConnectionCountsFinder(logger, () => state.runtime.collectors.connectioncounts.enabled, opts.detect ?? (async () => undefined));
  const set = new ServerSet({
    runtime: () => state.runtime,
    finder,
    logger,
    onFileError: (file) => fileErrors.push(file),
    added: (name, s) => events.push(`+${name} ${s.target.url}`),
    removed: async (name) => {
      events.push(`-${name}`);
    },
    applied: (count) => counts.push(count),
  });
  return { state, set, events, counts, fileErrors, finder };
}

const TWO = 'servers:\n  - name: a\n    url: http://a.example:8087\n    connectioncounts_url: "off"\n  - name: b\n    url: http://b.example:8087\n    connectioncounts_url: "off"\n';

describe('server set', () => {
  it('starts the servers the configuration names, and says how many', async () => {
    const h = harness(TWO);
    await h.set.apply();
    expect(h.events).toEqual(['+a http://a.example:8087', '+b http://b.example:8087']);
    expect([...h.set.targets().keys()]).toEqual(['a', 'b']);
    expect(h.counts).toEqual([2]);
  });

  it('applies a new configuration by difference: an unchanged server keeps running', async () => {
    const h = harness(TWO);
    await h.set.apply();
    h.events.length = 0;
    h.state.runtime = runtimeOf('servers:\n  - name: a\n    url: http://a.example:8087\n    connectioncounts_url: "off"\n  - name: b\n    url: http://b.example:9087\n    connectioncounts_url: "off"\n  - name: c\n    url: http://c.example:8087\n    connectioncounts_url: "off"\n');
    await h.set.apply();
    // b's URL changed: stopped and started anew; c is new; a untouched.
    expect(h.events).toEqual(['-b', '+b http://b.example:9087', '+c http://c.example:8087']);
    h.events.length = 0;
    h.state.runtime = runtimeOf('servers:\n  - name: c\n    url: http://c.example:8087\n    connectioncounts_url: "off"\n');
    await h.set.apply();
    expect(h.events).toEqual(['-a', '-b']);
    expect(h.counts.at(-1)).toBe(1);
  });

  it('applies changes one at a time, in the order asked', async () => {
    const h = harness(TWO);
    const first = h.set.apply();
    h.state.runtime = runtimeOf('servers:\n  - name: a\n    url: http://a.example:8087\n    connectioncounts_url: "off"\n');
    const second = h.set.apply();
    await Promise.all([first, second]);
    // Each apply reads the configuration when it runs: both see the second one, so b never starts.
    expect(h.events).toEqual(['+a http://a.example:8087']);
  });

  it('keeps only this shard\'s servers', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `s${i}`);
    const yaml = `shard:\n  index: 0\n  count: 2\nservers:\n${names.map((s) => `  - name: ${s}\n    url: http://${s}.example:8087\n    connectioncounts_url: "off"\n`).join('')}`;
    const h = harness(yaml);
    await h.set.apply();
    const other = harness(yaml.replace('index: 0', 'index: 1'));
    await other.set.apply();
    const mine = [...h.set.targets().keys()];
    const theirs = [...other.set.targets().keys()];
    expect(mine.length).toBeGreaterThan(0);
    expect(theirs.length).toBeGreaterThan(0);
    expect([...mine, ...theirs].sort()).toEqual([...names].sort());
  });

  it('takes target-file servers, keeps the first of a name and warns once, counts a file it cannot use', async () => {
    const warnings: string[] = [];
    const logger = { ...silentLogger(), child: () => logger, warn: (_meta: unknown, msg: string) => warnings.push(msg) } as unknown as Logger;
    const files = mkdtempSync(join(dir, 'targets-'));
    writeFileSync(join(files, 'eu.targets.yaml'), '- targets: [http://eu1.example:8087, http://a.example:8087]\n  module: default\n  labels: {dc: eu}\n');
    writeFileSync(join(files, 'bad.targets.yaml'), '- targets: [http://x.example:8087]\n  module: no-such-module\n');
    const h = harness(`servers:\n  - name: a.example:8087\n    url: http://a.example:8087\n    connectioncounts_url: "off"\nmodules:\n  default: {}\nservers_files: ["${files}/*.targets.yaml"]\n`, { logger });
    h.set.startFiles();
    try {
      await h.set.apply();
      await h.set.apply();
      expect([...h.set.targets().keys()]).toEqual(['a.example:8087', 'eu1.example:8087']);
      expect(h.set.labels.get('eu1.example:8087')).toContain('dc="eu"');
      expect(warnings.filter((w) => w.includes('listed already'))).toHaveLength(1);
      expect(h.fileErrors.length).toBeGreaterThan(0);
      expect(new Set(h.fileErrors)).toEqual(new Set([join(files, 'bad.targets.yaml')]));
    } finally {
      h.set.stopFiles();
    }
  });

  it('at shutdown keeps the target-file servers an apply still in flight reads; a reload that drops the files removes them', async () => {
    const files = mkdtempSync(join(dir, 'targets-'));
    writeFileSync(join(files, 'eu.targets.yaml'), '- targets: [http://eu1.example:8087]\n  module: default\n');
    const h = harness(`servers:\n  - name: a\n    url: http://a.example:8087\n    connectioncounts_url: "off"\nmodules:\n  default: {}\nservers_files: ["${files}/*.targets.yaml"]\n`);
    h.set.startFiles();
    await h.set.apply();
    h.events.length = 0;
    // close(): the watch stops, then an apply already queued (a reload's, a file change's) runs.
    h.set.stopWatching();
    await h.set.apply();
    expect(h.events).toEqual([]);
    h.set.stopFiles();
    await h.set.apply();
    expect(h.events).toEqual(['-eu1.example:8087']);
  });

  it('asks a server\'s default connectioncounts provider once before polling it, and polls with what it found', async () => {
    const asked: string[] = [];
    const h = harness('servers:\n  - name: a\n    url: http://a.example:8087\n', {
      detect: async (t) => {
        asked.push(t.name);
        return 'http://a.example:8086/connectioncounts';
      },
    });
    await h.set.apply();
    await h.set.apply();
    expect(asked).toEqual(['a']);
    expect(h.set.targets().get('a')?.connectionCountsUrl).toBe('http://a.example:8086/connectioncounts');
  });

  it('asks nothing of :8086 while the connectioncounts collector is off', async () => {
    const asked: string[] = [];
    const h = harness('servers:\n  - name: a\n    url: http://a.example:8087\ncollectors:\n  connectioncounts: false\n', {
      detect: async (t) => {
        asked.push(t.name);
        return undefined;
      },
    });
    await h.set.apply();
    expect(asked).toEqual([]);
    expect(h.events).toEqual(['+a http://a.example:8087']);
  });
});
