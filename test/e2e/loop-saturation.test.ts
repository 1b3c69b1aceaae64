import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { loadConfig } from '../../src/config/load.js';
import { startExporter, type Exporter } from '../../src/exporter/exporter.js';
import { createLogger } from '../../src/base/logger.js';
import { samples } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';

/**
 * Issue 47: an exporter whose own event loop is saturated (here held busy nine tenths of the time on the thread it runs
 * on, as a replica with more servers than its core can poll is) spaces its polls further apart, says so once, shows
 * the interval in force on /metrics and in the status API with the reason, and goes back to the configured intervals
 * once the loop has room again.
 */

interface Line {
  level: string;
  msg: string;
}

let sim: Simulator | undefined;
let exporter: Exporter | undefined;
let hog: NodeJS.Timeout | undefined;

afterEach(async () => {
  clearInterval(hog);
  await exporter?.close();
  await sim?.close();
});

describe('a saturated event loop', () => {
  it('spaces polls out, says it on /metrics, in the status API and in one log line, and comes back', async () => {
    sim = await startSimulator({ auth: 'basic', password: 'loop-load', apps: 1, streams: 3, renditions: [] });
    const out = new PassThrough();
    let logged = '';
    out.on('data', (d: Buffer) => (logged += d.toString()));
    const lines = () =>
      logged
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Line);
    const runtime = loadConfig(
      {
        wowzaUrl: [sim.url],
        wowzaUsername: sim.username,
        wowzaConnectionCountsUrl: ['off'],
        pollInterval: '1s',
        listenAddress: ['127.0.0.1:0'],
      },
      { WOWZA_PASSWORD: 'loop-load' },
      () => undefined,
    );
    exporter = await startExporter(runtime, createLogger({ destination: out }));
    const e = exporter;
    const machineInterval = async () => samples(await e.scrape(), 'wowza_exporter_collector_interval_seconds', { collector: 'machine' })[0]?.value;
    await waitFor('the machine collector polled at its interval', async () => ((await machineInterval()) === 1 ? true : undefined));

    // Busy 45 ms of every 50: the loop still turns (timers, sockets), but has almost no idle time left.
    hog = setInterval(() => {
      const until = performance.now() + 45;
      while (performance.now() < until) {
        // held
      }
    }, 5);
    await waitFor('the saturation said', async () => (lines().some((l) => l.level === 'warn' && l.msg.includes('event loop is saturated')) ? true : undefined), 60_000);
    await waitFor('a longer interval on /metrics', async () => ((await machineInterval())! > 1 ? true : undefined), 30_000);
    const status = (await (await fetch(`${e.url}/api/v1/status`)).json()) as { servers: Array<{ collectors: Array<{ name: string; interval_seconds: number; interval_reason: string | null }> }> };
    const machine = status.servers[0]!.collectors.find((c) => c.name === 'machine')!;
    expect(machine.interval_seconds).toBeGreaterThan(1);
    expect(machine.interval_reason).toContain('event loop is saturated');

    clearInterval(hog);
    hog = undefined;
    await waitFor('the recovery said', async () => (lines().some((l) => l.msg.includes('back at their configured intervals')) ? true : undefined), 120_000);
    await waitFor('the configured interval on /metrics again', async () => ((await machineInterval()) === 1 ? true : undefined), 30_000);
    // One line each way, not one per collector or poll.
    expect(lines().filter((l) => l.msg.includes('event loop is saturated'))).toHaveLength(1);
    expect(lines().filter((l) => l.msg.includes('back at their configured intervals'))).toHaveLength(1);
  }, 240_000);
});
