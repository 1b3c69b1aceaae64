import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { missingTool, promtoolPath } from '../helpers/prometheus.js';
import { waitFor } from '../helpers/ports.js';

const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.video-token-secret.sig';
const PROMTOOL = promtoolPath();

describe('Wowza Video schedules on /metrics', () => {
  let api: Server;
  let sim: Simulator;
  let exporter: RunningExporter;
  const auths: string[] = [];

  beforeAll(async () => {
    const future = new Date(Date.now() + 3 * 86_400_000).toISOString().replace(/\.\d+Z$/, 'Z');
    api = createServer((req, res) => {
      auths.push(String(req.headers.authorization));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          schedules: [
            { id: 'sch1', name: 'Morning show', state: 'enabled', transcoder_id: 'tr1', transcoder_name: 'Studio', action_type: 'start_stop', recurrence_type: 'once', start_transcoder: future, stop_transcoder: future.replace(/T\d\d/, 'T23'), created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z' },
            { id: 'sch2', name: 'Old', state: 'expired', transcoder_id: 'tr2', action_type: 'start', recurrence_type: 'once', start_transcoder: '2020-01-01T00:00:00Z', created_at: '2020-01-01T00:00:00Z', updated_at: '2020-01-01T00:00:00Z' },
          ],
        }),
      );
    });
    await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
    const dir = mkdtempSync(join(tmpdir(), 'wowza-video-'));
    writeFileSync(join(dir, 'token'), TOKEN + '\n', { mode: 0o600 });
    sim = await startSimulator({ auth: 'basic', frozen: true });
    exporter = await startExporterProcess(
      [
        '--wowza.url', sim.url, '--wowza.username', sim.username, '--poll.interval', '1s', '--wowza.timeout', '800ms',
        '--video.url', `http://127.0.0.1:${(api.address() as AddressInfo).port}/api/v1.11`, '--video.token-file', join(dir, 'token'),
      ],
      { WOWZA_PASSWORD: sim.password },
    );
  });
  afterAll(async () => {
    await exporter?.stop();
    await sim?.close();
    await new Promise((r) => api?.close(r));
  });

  it('exposes info, enabled state and next times, with the token sent and never shown', async () => {
    const text = await waitFor('video metrics', async () => {
      const t = await exporter.metrics();
      return t.includes('wowza_video_schedule_info') ? t : undefined;
    });
    expect(auths[0]).toBe(`Bearer ${TOKEN}`);
    expect(samples(text, 'wowza_video_schedule_enabled', { schedule_id: 'sch1' })[0]!.value).toBe(1);
    expect(samples(text, 'wowza_video_schedule_enabled', { schedule_id: 'sch2' })[0]!.value).toBe(0);
    expect(samples(text, 'wowza_video_schedule_next_start_timestamp_seconds', { schedule_id: 'sch1' })[0]!.value).toBeGreaterThan(Date.now() / 1000);
    expect(samples(text, 'wowza_video_schedule_next_start_timestamp_seconds', { schedule_id: 'sch2' })).toEqual([]);
    expect(samples(text, 'wowza_exporter_collector_success', { collector: 'video' })[0]!.value).toBe(1);
    expect(text).not.toContain('video-token-secret');
    expect(exporter.output()).not.toContain('video-token-secret');
  });

  it.skipIf(missingTool('promtool', PROMTOOL, 'promtool check metrics with video metrics'))('promtool check metrics stays clean', async () => {
    const text = await exporter.metrics();
    const child = promisify(execFile)(PROMTOOL!, ['check', 'metrics']);
    child.child.stdin!.end(text);
    const { stdout, stderr } = await child;
    expect(stdout + stderr).toBe('');
  });
});
