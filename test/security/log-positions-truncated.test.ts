import { existsSync, mkdtempSync, readFileSync, rmSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { samples, startExporterProcess, writeLogsConfig, type RunningExporter } from '../helpers/exporter-process.js';
import { startLokiReceiver, type LokiReceiver } from '../helpers/loki-receiver.js';
import { waitFor } from '../helpers/ports.js';

/**
 * Issue 41, finding 6: a positions file truncated behind the exporter's back was set aside as `.corrupt`, and the
 * follower restarted at the end of the log (start_at: end, the default): the lines written meanwhile were lost, and
 * nothing counted it. Now the previous copy kept beside it is used: lines may come twice, none is lost.
 */

const ACCESS = 'wowzastreamingengine_access';

const record = (seq: number) => ({ 'x-event': 'play', 'x-category': 'stream', 'x-severity': 'INFO', 'x-status': 200, 'x-comment': `seq=${seq}`, 'x-app': 'live' });

describe('a positions file truncated mid-run', () => {
  let dir = '';
  let sim: Simulator;
  let receiver: LokiReceiver;
  let exporter: RunningExporter | undefined;
  let firstOutput = '';
  let positionsPath = '';
  const TOTAL = 300;

  const delivered = () => {
    const seqs = new Set<number>();
    for (const l of receiver.lines) {
      const m = /"x-comment":"seq=(\d+)"/.exec(l.line);
      if (m) seqs.add(Number(m[1]));
    }
    return seqs;
  };
  const savedOffset = (): number | undefined => {
    try {
      const doc = JSON.parse(readFileSync(positionsPath, 'utf8')) as { positions: Array<{ log_type: string; offset: number }> };
      return doc.positions.find((p) => p.log_type === ACCESS)?.offset;
    } catch {
      return undefined;
    }
  };
  const deliveredUpTo = (n: number, what: string) =>
    waitFor(what, () => (Array.from({ length: n }, (_, i) => i + 1).every((s) => delivered().has(s)) ? true : undefined), 60_000, 50).catch((err: Error) => {
      throw new Error(`${err.message}: ${delivered().size} delivered; output:\n${(exporter?.output() ?? firstOutput).slice(-3000)}`);
    });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'log-positions-truncated-'));
    positionsPath = join(dir, 'positions.json');
    sim = await startSimulator({ auth: 'basic', frozen: true, logs: { linesPerSecond: 0 } });
    receiver = await startLokiReceiver();
    // start_at stays `end`, the default: a log without a usable position skips what was written while it was down.
    const config = writeLogsConfig(dir, sim, {
      log_types: ['access'],
      follow_interval: '200ms',
      positions_sync_interval: '100ms',
      sinks: [{ type: 'loki', url: receiver.url }],
      batch: { max_lines: 20, max_wait: '100ms' },
    });
    exporter = await startExporterProcess(['--config', config], { WOWZA_PASSWORD: sim.password });
    // The follower's starting point is saved before any line is written, so lines 1.. count as new.
    await waitFor('the starting position saved', () => (savedOffset() !== undefined ? true : undefined), 30_000);

    // Several rounds, each delivered and saved before the next: the exporter writes the file several times.
    for (let round = 0; round < 5; round++) {
      const from = round * 40 + 1;
      sim.logs.append(ACCESS, Array.from({ length: 40 }, (_, i) => record(from + i)));
      await deliveredUpTo(from + 39, `lines up to ${from + 39}`);
      const end = sim.logs.bytes(ACCESS).length;
      await waitFor(`position ${end} saved`, () => (savedOffset() === end ? true : undefined), 30_000);
    }

    // Nothing is being read or saved now: the truncated file is what a crash leaves behind.
    const size = readFileSync(positionsPath).length;
    truncateSync(positionsPath, Math.floor(size / 2));
    await exporter.stop('SIGKILL');
    firstOutput = exporter.output();
    exporter = undefined;

    // Written while no exporter runs: lost if the restart begins at the end of the log.
    sim.logs.append(ACCESS, Array.from({ length: TOTAL - 200 }, (_, i) => record(201 + i)));
    exporter = await startExporterProcess(['--config', config], { WOWZA_PASSWORD: sim.password });
    await deliveredUpTo(TOTAL, 'every line after the restart');
  }, 240_000);

  afterAll(async () => {
    await exporter?.stop('SIGKILL');
    await receiver?.close();
    await sim?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('loses no line: those written while it was down arrive after the restart', () => {
    const got = delivered();
    expect(Array.from({ length: TOTAL }, (_, i) => i + 1).filter((s) => !got.has(s))).toEqual([]);
  });

  it('says once that it resumed from the previous copy, keeps the bad file aside, and counts it', async () => {
    const said = exporter!.output().match(/positions file is unusable: resuming from its previous copy/g) ?? [];
    expect(said).toHaveLength(1);
    expect(existsSync(`${positionsPath}.corrupt`)).toBe(true);
    const text = await exporter!.metrics();
    expect(samples(text, 'wowza_log_positions_unusable_total', { fallback: 'previous' })[0]?.value).toBe(1);
    expect(samples(text, 'wowza_log_positions_unusable_total', { fallback: 'none' })[0]?.value).toBe(0);
  });

  it('writes a good positions file again', async () => {
    const end = sim.logs.bytes(ACCESS).length;
    await waitFor('the position at the end of the log', () => (savedOffset() === end ? true : undefined), 30_000);
  });
});
