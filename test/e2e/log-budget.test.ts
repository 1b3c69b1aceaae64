import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';

/**
 * Issue 48: the log follower asked for pages as fast as it parsed them, whatever the server's request budget (56
 * requests in one second at a budget of 50). Its reads are requests to the server like the polls': within
 * poll.max_requests_per_second, and the stream collector keeps polling while a backlog drains.
 */
const BUDGET = 10;
const LINES = 150_000;

describe('a log backlog drains within the server\'s request budget', () => {
  let sim: Simulator;
  let dir: string;
  let exporter: RunningExporter;
  let busiestSecond = 0;
  let drainedAfterMs = 0;
  /** A stream poll ended while the backlog drained, after the first one seen. */
  let streamPolledAgainWhileDraining = false;
  let backlogSeen = 0;
  let catchUpSeen = 0;

  beforeAll(async () => {
    sim = await startSimulator({ auth: 'basic', password: 'budget-pw', logs: { linesPerSecond: 0, maxFileBytes: 256 * 1024 * 1024 } });
    sim.logs.generate('wowzastreamingengine_access', LINES);
    dir = mkdtempSync(join(tmpdir(), 'wowza-log-budget-'));
    const out = join(dir, 'lines.ndjson');
    writeFileSync(
      join(dir, 'config.yaml'),
      stringify({
        servers: [{ name: 'wse-1', url: sim.url, username: sim.username, auth: 'basic', connectioncounts_url: 'off' }],
        poll: { interval: '5s', max_requests_per_second: BUDGET },
        logs: {
          positions_file: join(dir, 'positions.json'),
          dead_letter_file: join(dir, 'dead-letter.ndjson'),
          start_at: 'beginning',
          log_types: ['wowzastreamingengine_access'],
          line_count: 1000,
          sinks: [{ type: 'file', path: out }],
        },
      }),
    );
    // Requests the server saw, sampled every 100 ms: the busiest second is the most any 1 s window held.
    const total = () => Object.values(sim.counters.byRoute).reduce((a, n) => a + n, 0);
    const seen: Array<{ at: number; n: number }> = [];
    const sampler = setInterval(() => {
      const now = performance.now();
      const n = total();
      seen.push({ at: now, n });
      const second = seen.find((s) => s.at >= now - 1000)!;
      const before = seen[seen.indexOf(second) - 1] ?? second;
      busiestSecond = Math.max(busiestSecond, n - before.n);
    }, 100);
    const started = performance.now();
    exporter = await startExporterProcess(['--config', join(dir, 'config.yaml')], { WOWZA_PASSWORD: 'budget-pw' });
    let firstStreamPoll: number | undefined;
    // What the sink acknowledged (the file sink rotates its file at its size cap, so the file alone does not tell).
    let shipped = 0;
    try {
      await waitFor(
        `${LINES} lines shipped`,
        async () => {
          const text = await exporter.metrics();
          shipped = samples(text, 'wowza_log_forwarded_lines_total').reduce((a, x) => a + x.value, 0);
          backlogSeen = Math.max(backlogSeen, samples(text, 'wowza_log_follower_backlog_lines')[0]?.value ?? 0);
          catchUpSeen = Math.max(catchUpSeen, samples(text, 'wowza_log_follower_catch_up_seconds')[0]?.value ?? 0);
          const [last] = samples(text, 'wowza_exporter_last_poll_timestamp_seconds', { collector: 'stream' });
          if (last) firstStreamPoll ??= last.value;
          if (last && shipped < LINES && last.value > firstStreamPoll!) streamPolledAgainWhileDraining = true;
          return shipped >= LINES ? true : undefined;
        },
        240_000,
        250,
      ).catch((err: unknown) => {
        throw new Error(`${(err as Error).message}: ${shipped} so far; the exporter said: ${exporter.output().slice(-1500)}`);
      });
      drainedAfterMs = performance.now() - started;
    } finally {
      clearInterval(sampler);
    }
  }, 300_000);
  afterAll(async () => {
    await exporter?.stop();
    await sim?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(`no second holds more requests than the budget (${BUDGET}/s) and its burst allow, log pages included`, () => {
    // The pacer's burst is a fifth of the budget: a second may hold up to budget + burst.
    expect(busiestSecond).toBeGreaterThan(0);
    expect(busiestSecond).toBeLessThanOrEqual(BUDGET + BUDGET / 5);
  });

  it('150 pages at 10 a second (less what the polls take) cannot drain in under 13 s: the pace is the budget\'s, not the pipeline\'s', () => {
    expect(drainedAfterMs).toBeGreaterThan(13_000);
  });

  it('the backlog showed on /metrics while it drained, and is 0 once caught up', async () => {
    expect(backlogSeen).toBeGreaterThan(0);
    expect(catchUpSeen).toBeGreaterThan(0);
    const text = await exporter.metrics();
    await waitFor('the backlog at 0', async () => (samples(await exporter.metrics(), 'wowza_log_follower_backlog_bytes')[0]?.value === 0 ? true : undefined));
    expect(samples(text, 'wowza_log_follower_backlog_lines').length).toBe(1);
  });

  it('the stream collector kept completing its polls while the backlog drained', () => {
    expect(streamPolledAgainWhileDraining).toBe(true);
  });
});
