import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { startVideoSimulator, videoSchedule, type VideoSimulator } from '@wowza-exporter/simulator/video';
import { samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { missingTool, promtoolPath } from '../helpers/prometheus.js';
import { waitFor } from '../helpers/ports.js';

const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.video-token-secret.sig';
const PROMTOOL = promtoolPath();

/**
 * The Wowza Video collector against the video simulator, whose list gives limited details per schedule as the
 * real service's does (docs/wowza-api-notes.md): action, recurrence and times only come from GET /schedules/{id}.
 */
describe('Wowza Video schedules on /metrics', () => {
  let api: VideoSimulator;
  let sim: Simulator;
  let exporter: RunningExporter;

  beforeAll(async () => {
    api = await startVideoSimulator({
      token: TOKEN,
      schedules: [
        videoSchedule('sch1', { name: 'Morning show', transcoder_name: 'Studio', action_type: 'start_stop' }),
        videoSchedule('sch2', { name: 'Old', state: 'expired', action_type: 'start', start_transcoder: '2020-01-01T00:00:00Z', stop_transcoder: null }),
        // A state the reference does not list: kept, counted, and the rest of the poll is not failed.
        videoSchedule('sch3', { name: 'Future kind', state: 'archived' }),
        videoSchedule('sch4', { name: 'New action' }),
      ],
      // And an action_type it does not list, in sch4's details.
      unknownValues: [{ id: 'sch4', field: 'action_type', value: 'restart' }],
      // Paged, as the service's other lists are: two pages of two.
      pageSize: 2,
    });
    const dir = mkdtempSync(join(tmpdir(), 'wowza-video-'));
    writeFileSync(join(dir, 'token'), TOKEN + '\n', { mode: 0o600 });
    sim = await startSimulator({ auth: 'basic', frozen: true });
    writeFileSync(join(dir, 'config.yaml'), `video:\n  url: ${api.url}\n  token_file: ${join(dir, 'token')}\n  interval: 1s\n`);
    exporter = await startExporterProcess(
      ['--config', join(dir, 'config.yaml'), '--wowza.url', sim.url, '--wowza.username', sim.username, '--poll.interval', '1s', '--wowza.timeout', '800ms'],
      { WOWZA_PASSWORD: sim.password },
    );
  });
  afterAll(async () => {
    await exporter?.stop();
    await sim?.close();
    await api?.close();
  });

  it('publishes info, enabled state and next start/stop from a list that holds summaries only', async () => {
    const text = await waitFor('video metrics', async () => {
      const t = await exporter.metrics();
      return t.includes('wowza_video_schedule_info') ? t : undefined;
    });
    const info = samples(text, 'wowza_video_schedule_info', { schedule_id: 'sch1' })[0]!;
    expect(info.labels).toMatchObject({ name: 'Morning show', action_type: 'start_stop', recurrence_type: 'once', state: 'enabled' });
    expect(samples(text, 'wowza_video_schedule_enabled', { schedule_id: 'sch1' })[0]!.value).toBe(1);
    expect(samples(text, 'wowza_video_schedule_enabled', { schedule_id: 'sch2' })[0]!.value).toBe(0);
    const start = api.schedules.get('sch1')!.start_transcoder!;
    expect(samples(text, 'wowza_video_schedule_next_start_timestamp_seconds', { schedule_id: 'sch1' })[0]!.value).toBe(Date.parse(start) / 1000);
    expect(samples(text, 'wowza_video_schedule_next_stop_timestamp_seconds', { schedule_id: 'sch1' })[0]!.value).toBe(Date.parse(api.schedules.get('sch1')!.stop_transcoder!) / 1000);
    expect(samples(text, 'wowza_video_schedule_next_start_timestamp_seconds', { schedule_id: 'sch2' })).toEqual([]);
    expect(samples(text, 'wowza_exporter_collector_success', { collector: 'video' })[0]!.value).toBe(1);
    // The unknown state: the schedule is there, counted once, with no enabled value.
    expect(samples(text, 'wowza_video_schedule_info', { schedule_id: 'sch3' })[0]!.labels.state).toBe('archived');
    expect(samples(text, 'wowza_video_schedule_enabled', { schedule_id: 'sch3' })).toEqual([]);
    expect(samples(text, 'wowza_video_unknown_values_total', { field: 'state' })[0]!.value).toBe(1);
    // The unknown action: the schedule is there with the value as it came, enabled, with no next run (the
    // action says nothing known about when the transcoder runs).
    expect(samples(text, 'wowza_video_schedule_info', { schedule_id: 'sch4' })[0]!.labels).toMatchObject({ action_type: 'restart', state: 'enabled' });
    expect(samples(text, 'wowza_video_schedule_enabled', { schedule_id: 'sch4' })[0]!.value).toBe(1);
    expect(samples(text, 'wowza_video_schedule_next_start_timestamp_seconds', { schedule_id: 'sch4' })).toEqual([]);
    expect(samples(text, 'wowza_video_unknown_values_total', { field: 'action_type' })[0]!.value).toBe(1);
    expect(exporter.output()).toMatch(/value the API reference does not list/);
    expect(text).not.toContain('video-token-secret');
    expect(exporter.output()).not.toContain('video-token-secret');
  });

  it('asks for each schedule once, then only for the list (both pages) while nothing changes', async () => {
    const lists = api.requests.get('GET /schedules') ?? 0;
    await waitFor('two more polls', () => ((api.requests.get('GET /schedules') ?? 0) >= lists + 4 ? true : undefined), 45_000);
    expect(api.requests.get('GET /schedules/{id}')).toBe(4);
  });

  it.skipIf(missingTool('promtool', PROMTOOL, 'promtool check metrics with video metrics'))('promtool check metrics stays clean', async () => {
    const text = await exporter.metrics();
    const child = promisify(execFile)(PROMTOOL!, ['check', 'metrics']);
    child.child.stdin!.end(text);
    const { stdout, stderr } = await child;
    expect(stdout + stderr).toBe('');
  });
});
