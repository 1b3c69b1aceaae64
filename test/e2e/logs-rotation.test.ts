import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { samples, startExporterProcess, writeLogsConfig, type RunningExporter } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';

const ACCESS = 'wowzastreamingengine_access';

/**
 * Rotations the dates cannot tell: a real server's `#Start-Date` has one-second resolution, so two size
 * rotations within a second leave three files with one date. And a `{S}/logfiles` list that cannot be read
 * must cost the lines it would have recovered, said and counted, never the log itself.
 */
describe('log rotation as the reference leaves it', () => {
  let dir: string;
  let sim: Simulator;
  let exporter: RunningExporter;
  const out = () => join(dir, 'records.ndjson');
  const delivered = (): number[] =>
    existsSync(out())
      ? readFileSync(out(), 'utf8')
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => Number(/seq=(\d+)/.exec(String((JSON.parse(l) as Record<string, unknown>)['x-comment']))?.[1]))
          .filter((n) => !Number.isNaN(n)) // the server's own start-up lines
      : [];
  let written = 0;
  const write = (n: number) => {
    sim.logs.append(ACCESS, Array.from({ length: n }, (_, i) => ({ 'x-event': 'play', 'x-category': 'stream', 'x-severity': 'INFO', 'x-comment': `seq=${written + i + 1}` })));
    written += n;
  };
  const metric = async (name: string) => samples(await exporter.metrics(), name, { log_type: ACCESS })[0]?.value;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wowza-rotation-'));
    sim = await startSimulator({ auth: 'basic', frozen: true, logs: { linesPerSecond: 0 } });
    const config = writeLogsConfig(dir, sim, {
      follow_interval: '200ms',
      start_at: 'beginning',
      log_types: ['access'],
      retry: { min_backoff: '100ms', max_backoff: '500ms' },
      sinks: [{ type: 'file', path: out() }],
    });
    exporter = await startExporterProcess(['--config', config, '--no-collector.stream'], { WOWZA_PASSWORD: sim.password });
    write(5);
    await waitFor(`the first lines (${exporter.output().slice(-1500)})`, () => (delivered().length === 5 ? true : undefined));
  });
  afterAll(async () => {
    await exporter?.stop();
    await sim?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('two rotations within one second, the newest file already past the old offset: every line once, in order', async () => {
    // All in one tick: the two files the rotations start share one #Start-Date.
    write(3);
    sim.logs.rotate(ACCESS);
    write(3);
    sim.logs.rotate(ACCESS);
    write(30);
    const dates = sim.logs.files().filter((f) => f.logType === ACCESS).map((f) => Math.floor(f.startDateMS / 1000));
    expect(new Set(dates.slice(-2)).size).toBe(1);
    await waitFor('every line', () => (delivered().length >= 41 ? true : undefined), 45_000);
    expect(delivered()).toEqual(Array.from({ length: 41 }, (_, i) => i + 1));
    expect(await metric('wowza_log_rotation_gaps_total')).toBe(0);
  });

  it('a file list that cannot be read: the rolled rest is given up as a counted gap and the new file followed', async () => {
    const stop = sim.faults.inject('GET /v2/servers/{server}/logfiles', 'garbage');
    try {
      write(2); // 42, 43: in the file that rolls, after the last read
      sim.logs.rotate(ACCESS);
      write(5); // 44..48
      await waitFor('the new file', () => (delivered().includes(48) ? true : undefined), 45_000);
      expect(delivered().slice(41)).toEqual([44, 45, 46, 47, 48]);
      expect(await metric('wowza_log_rotation_gaps_total')).toBe(1);
      expect(exporter.output()).toMatch(/log rotated and the rolled file could not be read .*lines written after the last read and before the rotation are lost/);
      write(1);
      await waitFor('later lines', () => (delivered().includes(49) ? true : undefined), 45_000);
    } finally {
      stop();
    }
  });
});
