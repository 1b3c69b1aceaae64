import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { samples, startExporterProcess } from '../helpers/exporter-process.js';
import { YOUNG_GENERATION_CAP_BYTES } from '../../src/base/v8-flags.js';
import { waitFor } from '../helpers/ports.js';

const RECORDER = fileURLToPath(new URL('../helpers/module-recorder.mjs', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * `npx wowza-exporter` is small without any setting (issue 27), and a user's own V8 settings win. Each test runs
 * exporters of its own and waits on their polls: the tests run side by side.
 */
describe.concurrent('serve\'s footprint, as users run it', () => {
  let sim: Simulator;
  let dir: string;
  beforeAll(async () => {
    sim = await startSimulator({ auth: 'basic', apps: 4, streams: 50 });
    dir = mkdtempSync(join(tmpdir(), 'wowza-footprint-'));
  });
  afterAll(async () => {
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Waits until the exporter has finished `n` stream polls (what it reports, not the clock): each poll gives the stream
   * collector a new last-poll time, seen here at the scrapes between two polls.
   */
  async function streamPolls(exporter: Awaited<ReturnType<typeof startExporterProcess>>, n: number): Promise<void> {
    const seen = new Set<number>();
    await waitFor(`${n} stream polls`, async () => {
      const [s] = samples(await exporter.metrics(), 'wowza_exporter_last_poll_timestamp_seconds', { collector: 'stream' });
      if (s) seen.add(s.value);
      return seen.size >= n ? true : undefined;
    });
  }

  async function newSpaceBytes(env: NodeJS.ProcessEnv): Promise<number> {
    const exporter = await startExporterProcess(['--wowza.url', sim.url, '--wowza.username', sim.username, '--poll.interval', '1s'], { WOWZA_PASSWORD: sim.password, ...env });
    try {
      // Polls of a few hundred streams: enough for V8 to grow the young generation as far as it is allowed.
      await streamPolls(exporter, 3);
      return samples(await exporter.metrics(), 'nodejs_heap_space_size_total_bytes', { space: 'new' })[0]!.value;
    } finally {
      await exporter.stop();
    }
  }

  it('without NODE_OPTIONS: the young generation stops growing at two 2 MiB semi-spaces (node\'s default grows to 32 MiB)', async () => {
    expect(await newSpaceBytes({ NODE_OPTIONS: '' })).toBeLessThanOrEqual(YOUNG_GENERATION_CAP_BYTES);
  });

  it('with NODE_OPTIONS=--max-semi-space-size=8: the user\'s setting, and V8 grows the young generation within it', async () => {
    const bytes = await newSpaceBytes({ NODE_OPTIONS: '--max-semi-space-size=8' });
    expect(bytes).toBeGreaterThan(YOUNG_GENERATION_CAP_BYTES);
    expect(bytes).toBeLessThanOrEqual(3 * 8 * 1024 * 1024);
  });

  it('lets the young generation grow as V8 grows it once the exporter polls a fleet (200 polls in 10 s)', async () => {
    const GROWS = "V8's young generation grows as V8 grows it";
    // Three servers polled every second: 27 polls a second, a fleet's rate (one server at 1 s is 9).
    const sims = await Promise.all([0, 1, 2].map(() => startSimulator({ auth: 'basic', apps: 2, streams: 20, password: 'fleet-pw' })));
    const config = join(dir, 'fleet.yaml');
    writeFileSync(config, `servers:\n${sims.map((s) => `  - url: ${s.url}\n    username: ${s.username}\n`).join('')}poll: {interval: 1s}\n`);
    try {
      const exporter = await startExporterProcess(['--config', config, '--log.level', 'debug'], { WOWZA_PASSWORD: 'fleet-pw', NODE_OPTIONS: '' });
      try {
        await waitFor('the young generation let grow', () => exporter.output().includes(GROWS) || undefined);
        // V8 grows it at the scavenges that follow: past the cap, within node's own maximum (2 x 16 MiB).
        const bytes = await waitFor('the young generation past the cap', async () => {
          const [space] = samples(await exporter.metrics(), 'nodejs_heap_space_size_total_bytes', { space: 'new' });
          return space && space.value > YOUNG_GENERATION_CAP_BYTES ? space.value : undefined;
        });
        expect(bytes).toBeLessThanOrEqual(2 * 16 * 1024 * 1024);
      } finally {
        await exporter.stop();
      }
    } finally {
      await Promise.all(sims.map((s) => s.close()));
    }
  });

  it('holds Sparkplug and TurboFan off for a one-stream server, and turns them on at 30 polls in 10 s or once the polls hold 1,000 series', async () => {
    const TURNED_ON = 'JavaScript compilers (Sparkplug, TurboFan) on';
    // An engineering note: said at debug level only.
    const DEBUG = ['--log.level', 'debug'];
    const small = await startSimulator({ auth: 'basic', apps: 1, streams: 1 });
    try {
      // Polled every 5 s: fewer than 30 polls in any 10 s, the rate that turns them on too.
      const exporter = await startExporterProcess(['--wowza.url', small.url, '--wowza.username', small.username, '--poll.interval', '5s', ...DEBUG], { WOWZA_PASSWORD: small.password, NODE_OPTIONS: '' });
      try {
        await streamPolls(exporter, 3);
        expect(exporter.output()).not.toContain(TURNED_ON);
      } finally {
        await exporter.stop();
      }
      // The same server polled every second: a rate of work that turns them on.
      const busy = await startExporterProcess(['--wowza.url', small.url, '--wowza.username', small.username, '--poll.interval', '1s', ...DEBUG], { WOWZA_PASSWORD: small.password, NODE_OPTIONS: '' });
      try {
        const line = await waitFor('the compilers turned on by the poll rate', () => busy.output().split('\n').find((l) => l.includes(TURNED_ON)));
        expect((JSON.parse(line) as { reason: string }).reason).toBe('poll rate');
      } finally {
        await busy.stop();
      }
    } finally {
      await small.close();
    }
    // 4 applications of 50 streams: about 3,500 series.
    const exporter = await startExporterProcess(['--wowza.url', sim.url, '--wowza.username', sim.username, ...DEBUG], { WOWZA_PASSWORD: sim.password, NODE_OPTIONS: '' });
    try {
      const line = await waitFor('the compilers turned on', () => exporter.output().split('\n').find((l) => l.includes(TURNED_ON)));
      const entry = JSON.parse(line) as { reason: string; series: number };
      expect(entry.reason).toBe('polls');
      expect(entry.series).toBeGreaterThanOrEqual(1000);
    } finally {
      await exporter.stop();
    }
  });

  it('a metrics-only serve loads no log pipeline, webhooks, Video client, YAML parser, help renderer or other command, and the status page only when asked for', async () => {
    const file = join(dir, 'modules.txt');
    // The source modules in each file of the bundle (scripts/bundle.mjs writes the list).
    const bundled = JSON.parse(readFileSync(join(ROOT, 'dist/chunks/modules.json'), 'utf8')) as Record<string, string[]>;
    const exporter = await startExporterProcess(['--wowza.url', sim.url, '--wowza.username', sim.username], {
      WOWZA_PASSWORD: sim.password,
      NODE_OPTIONS: `--import ${RECORDER}`,
      LOADED_MODULES_FILE: file,
    });
    let builtins: string[] = [];
    const markers = (t: string) => t.split('# complete\n').length - 1;
    const loaded = async () => {
      const asked = markers(readFileSync(file, 'utf8')) + 1;
      exporter.proc.kill('SIGUSR2');
      // The loader thread appends the modules it saw on its own time: on a busy machine a line can land after the
      // main thread's "# complete", so the answer is one more marker, and every line is a module loaded.
      const text = await waitFor('the module list', () => {
        const t = readFileSync(file, 'utf8');
        return markers(t) >= asked ? t : undefined;
      });
      builtins = text.split('\n').filter((l) => l.startsWith('builtin:')).map((l) => l.slice('builtin:'.length));
      const files = text
        .split('\n')
        .filter((l) => l && !l.startsWith('#') && !l.startsWith('node:') && !l.startsWith('builtin:'))
        .map((l) => (l.startsWith('file://') ? fileURLToPath(l) : l))
        .filter((p) => p.startsWith(ROOT))
        .map((p) => p.slice(ROOT.length));
      // What runs is the bundle (dist/cli.js and dist/chunks/), never tsc's one file per module.
      expect(files.filter((f) => f.startsWith('dist/') && !(f.slice('dist/'.length) in bundled))).toEqual([]);
      // A file of the bundle stands for the source modules in it.
      return [...new Set(files.flatMap((f) => (f.startsWith('dist/') ? bundled[f.slice('dist/'.length)]! : [f])))];
    };
    try {
      const before = await loaded();
      // What serve needs is there...
      for (const m of ['src/exporter/exporter.ts', 'src/collectors/stream.ts', 'src/wowza/client.ts', 'src/metrics/exposition.ts', 'src/http/server.ts']) expect(before).toContain(m);
      // ...and what this configuration does not use is not.
      const unused = before.filter((p) =>
        /^src\/(logs\/(pipeline|source\/|transform\/|sinks\/|acks\/)|webhooks\/(receiver|jwt)|video\/(client|schedules-collector)|doctor\/|commands\/(simulate|demo|logs|doctor|webhooks|schedules)|status\/status-page|http\/(web-config|basic-auth))|^packages\/simulator\/|^node_modules\/(cliui|string-width|wrap-ansi|emoji-regex|yaml|bcryptjs|undici\/index\.js)\b/.test(p),
      );
      expect(unused, `loaded by a metrics-only serve: ${unused.join(", ")}`).toEqual([]);
      // Nor Node's HTTP/2 and TLS, which undici's HTTP/2 client and prom-client's Pushgateway load (an http:// server).
      expect(builtins).toContain('http');
      expect(builtins.filter((b) => /^(http2|https|tls|_tls_wrap|internal\/http2\/.*)$/.test(b))).toEqual([]);

      writeFileSync(file, '');
      await fetch(`${exporter.url}/`).then((r) => r.text());
      expect(await loaded()).toContain('src/status/status-page.ts');
    } finally {
      await exporter.stop();
    }
  });
});
