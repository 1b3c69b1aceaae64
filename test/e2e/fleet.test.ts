import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { hashmod } from '../../src/config/shard.js';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';
import { missingTool, prometheusPath } from '../helpers/prometheus.js';
import { startPrometheus, type PrometheusServer } from '../helpers/prometheus-server.js';

const PROMETHEUS = prometheusPath();
const PASSWORD = 'fleet-pa55';

/**
 * A fleet: servers listed in target files that change at run time, split over two replicas by `--shard`, with
 * a real Prometheus scraping both. Every server is polled by exactly one replica, carries its file's labels, and
 * comes and goes without a restart.
 */
describe('fleets: target files and shards', () => {
  let dir: string;
  let targetsDir: string;
  const sims: Simulator[] = [];
  const replicas: RunningExporter[] = [];
  let prom: PrometheusServer | undefined;
  const nameOf = (s: Simulator) => new URL(s.url).host;

  const upOn = async (replica: RunningExporter) => new Map(samples(await replica.metrics(), 'wowza_up').map((s) => [s.labels.server!, s]));

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wowza-fleet-'));
    targetsDir = join(dir, 'targets');
    writeFileSync(join(dir, 'password'), PASSWORD, { mode: 0o600 });
    for (let i = 0; i < 5; i++) sims.push(await startSimulator({ auth: 'basic', password: PASSWORD, frozen: true, apps: 1, streams: 1 }));
    const { mkdirSync } = await import('node:fs');
    mkdirSync(targetsDir);
    writeFileSync(join(targetsDir, 'site-a.yaml'), stringify([{ targets: sims.slice(0, 4).map((s) => s.url), module: 'wse', labels: { site: 'a', env: 'test' } }]));
    writeFileSync(
      join(dir, 'config.yaml'),
      stringify({
        servers_files: [join(targetsDir, '*.yaml')],
        servers_files_refresh_interval: '5s',
        modules: { wse: { username: 'admin', password_file: join(dir, 'password'), auth: 'basic' } },
        // 3 s, not 1 s: on a machine whose CPUs are busy (npm run test:busy) answers can take longer than the 0.8 s
        // request timeout of a 1 s interval, and then no poll ever completes.
        poll: { interval: '3s' },
      }),
    );
    for (const shard of ['0/2', '1/2']) replicas.push(await startExporterProcess(['--config', join(dir, 'config.yaml'), '--shard', shard]));
  });
  afterAll(async () => {
    await prom?.stop();
    for (const r of replicas) await r.stop();
    for (const s of sims) await s.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('two replicas poll each server of the file exactly once, the one its name hashes to, with the file\'s labels', async () => {
    const four = sims.slice(0, 4).map(nameOf);
    await waitFor('every server up on some replica', async () => {
      const all = [...(await upOn(replicas[0]!)).keys(), ...(await upOn(replicas[1]!)).keys()];
      return four.every((n) => all.includes(n)) ? true : undefined;
    });
    for (const [i, replica] of replicas.entries()) {
      const up = await upOn(replica);
      expect([...up.keys()].sort(), `replica ${i}`).toEqual(four.filter((n) => hashmod(n, 2) === i).sort());
      // The simulators' ports are random: one time in eight all four names hash to the same replica, and the other
      // one rightly polls nothing.
      if (up.size === 0) {
        expect(samples(await replica.metrics(), 'wowza_exporter_servers')[0]!.value).toBe(0);
        continue;
      }
      for (const s of up.values()) expect(s).toMatchObject({ value: 1, labels: { site: 'a', env: 'test' } });
      // The Wowza series carry them too, and so do the exporter's own series of the server (a poll on a busy
      // machine may time out: wait for a scrape that has them all).
      const names = ['wowza_machine_cpu_ratio', 'wowza_stream_uptime_seconds', 'wowza_exporter_collector_success', 'wowza_exporter_api_requests_total'];
      const ofServers = (text: string, name: string) => samples(text, name).filter((s) => s.labels.server !== undefined);
      let missing: string[] = [];
      const text = await waitFor(`every kind of series on replica ${i}`, async () => {
        const t = await replica.metrics();
        missing = names.filter((n) => ofServers(t, n).length === 0);
        if (missing.length > 0) {
          const success = samples(t, 'wowza_exporter_collector_success').map((s) => `${s.labels.server}/${s.labels.collector}=${s.value}`);
          throw new Error(`missing ${missing.join(', ')}; collector_success: ${success.join(' ')}; ${t.length} bytes: ${t.slice(0, 300)}`);
        }
        return t;
      });
      for (const name of names) for (const s of ofServers(text, name)) expect(s.labels, name).toMatchObject({ site: 'a', env: 'test' });
      expect(samples(text, 'wowza_exporter_servers')[0]!.value).toBe(up.size);
    }
  });

  it('a target file added at run time and a target removed are picked up without a restart', async () => {
    const fifth = nameOf(sims[4]!);
    const removed = nameOf(sims[0]!);
    writeFileSync(join(targetsDir, 'site-b.yaml'), stringify([{ targets: [sims[4]!.url], module: 'wse', labels: { site: 'b' } }]));
    writeFileSync(join(targetsDir, 'site-a.yaml'), stringify([{ targets: sims.slice(1, 4).map((s) => s.url), module: 'wse', labels: { site: 'a', env: 'test' } }]));
    await waitFor(
      'the fifth server up, the removed one gone from both replicas',
      async () => {
        const [a, b] = await Promise.all(replicas.map(upOn));
        const added = a!.get(fifth) ?? b!.get(fifth);
        return added?.value === 1 && !a!.has(removed) && !b!.has(removed) ? added : undefined;
      },
      40_000,
    );
    for (const replica of replicas) {
      const text = await replica.metrics();
      expect(text).not.toContain(`server="${removed}"`);
    }
    const owner = replicas[hashmod(fifth, 2)]!;
    expect((await upOn(owner)).get(fifth)!.labels).toMatchObject({ site: 'b' });
  });

  it('a broken target file keeps its last good content and is counted', async () => {
    writeFileSync(join(targetsDir, 'site-b.yaml'), 'targets: [this is not a list of groups');
    const fifth = nameOf(sims[4]!);
    const owner = replicas[hashmod(fifth, 2)]!;
    await waitFor('the error counted', async () => {
      const errors = samples(await owner.metrics(), 'wowza_exporter_servers_file_errors_total');
      return errors.some((e) => e.labels.file?.endsWith('site-b.yaml') && e.value > 0) ? true : undefined;
    });
    expect((await upOn(owner)).get(fifth)?.value).toBe(1);
    expect(owner.output()).toMatch(/target file is broken: keeping its last good content/);
  });

  it.skipIf(missingTool('prometheus', PROMETHEUS, 'a real Prometheus scraping both replicas'))(
    'a real Prometheus scraping both replicas sees every server once, and its hashmod splits them the same way',
    async () => {
      const servers = sims.slice(1).map(nameOf);
      prom = await startPrometheus(PROMETHEUS!, {
        targets: replicas.map((r) => r.url.replace('http://', '')),
        // The same names through Prometheus' own hashmod, as a /probe job would shard them.
        extraScrapeConfigs: [
          {
            job_name: 'hashmod-check',
            scrape_interval: '1m',
            static_configs: servers.map((s) => ({ targets: [replicas[0]!.url.replace('http://', '')], labels: { wowza_server: s } })),
            relabel_configs: [{ source_labels: ['wowza_server'], modulus: 2, target_label: 'shard', action: 'hashmod' }],
          },
        ],
      });
      const up = await prom.waitForQuery('wowza_up{job="wowza"}', (r) => servers.every((s) => r.some((x) => x.metric.server === s)), 60_000);
      for (const s of servers) expect(up.filter((x) => x.metric.server === s), s).toHaveLength(1);
      const targets = (await prom.targets()).filter((t) => t.scrapePool === 'hashmod-check');
      expect(targets).toHaveLength(servers.length);
      for (const t of targets) expect(Number(t.labels.shard), t.labels.wowza_server).toBe(hashmod(t.labels.wowza_server!, 2));
    },
    60_000,
  );
});
