import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { recorderCollector } from '../../../src/collectors/recorder.js';
import { vocabularyCache } from '../../../src/collectors/label-vocabulary.js';
import { untrackedObjects } from '../../../src/collectors/object-errors.js';
import type { PollContext } from '../../../src/collectors/collector.js';
import type { Topology } from '../../../src/collectors/discovery.js';
import { MetricSet } from '../../../src/metrics/metric-set.js';
import { WowzaHttpError } from '../../../src/wowza/errors.js';
import { Notices } from '../../../src/collectors/notices.js';
import { createLogger } from '../../../src/base/logger.js';
import { registerSecret } from '../../../src/base/secret-scrubber.js';
import { buildStatus, StatusFacts } from '../../../src/status/status-api.js';
import type { PollJobSpec } from '../../../src/polling/scheduler.js';
import type { WowzaTarget } from '../../../src/wowza/client.js';
import { secretForms, secretLeaks } from '../../helpers/secret-forms.js';

const recorder = (name: string, state = 'Recording in progress') => ({ recorderName: name, recorderState: state, recorderErrorString: '', currentSize: 1000, currentDuration: 2500, recordingStartTime: '2026-11-25T10:00:00Z', fileFormat: 'MP4', segmentationType: 'None' });

function context(topology: Partial<Topology>, streamRecorders: (instance: string) => Promise<unknown>) {
  const asked: string[] = [];
  const ctx = {
    server: 'wse-1',
    signal: new AbortController().signal,
    log: pino({ level: 'silent' }),
    limit: <T>(fn: () => Promise<T>) => fn(),
    vanished: () => {},
    objects: untrackedObjects(),
    vocabulary: vocabularyCache(),
    discovery: { get: async () => ({ vhosts: [], apps: [], streams: [], droppedStreams: 0, takenAt: 0, instances: [], ...topology }) },
    client: {
      streamRecorders: async (_v: string, app: string, instance: string) => {
        asked.push(`${app}/${instance}`);
        return streamRecorders(`${app}/${instance}`);
      },
    },
  } as unknown as PollContext;
  return { ctx, asked };
}

const instance = (app: string, recorders?: unknown[]) => ({ vhost: 'v', app, instance: { name: '_definst_', incomingStreams: [], outgoingStreams: undefined, recorders, streamGroups: undefined } });

describe('recorder collector', () => {
  it('reads the recorders of the instance list without a request; {I}/streamrecorders only where the list has no recorders key', async () => {
    const { ctx, asked } = context({ instances: [instance('a', [recorder('r1')]), instance('b'), instance('c', [])] }, async () => ({ streamrecorder: [recorder('r2', 'Waiting for stream')] }));
    const out = new MetricSet();
    await recorderCollector.poll(ctx, out);
    expect(asked).toEqual(['b/_definst_']);
    expect(out.samples('wowza_stream_recorder_recording').map((s) => [s.labels.application, s.labels.recorder, s.value])).toEqual([
      ['a', 'r1', 1],
      ['b', 'r2', 0],
    ]);
    expect(out.samples('wowza_stream_recorder_current_duration_seconds')[0]!.value).toBe(2.5);
    expect(out.samples('wowza_stream_recorder_start_timestamp_seconds')[0]!.value).toBe(Date.parse('2026-11-25T10:00:00Z') / 1000);
  });

  it('one instance whose recorders cannot be read costs only its recorders; a malformed recorder only itself', async () => {
    const { ctx } = context({ instances: [instance('a', [recorder('ok'), { recorderName: 7 }]), instance('b'), instance('c')] }, async (where) => {
      if (where === 'b/_definst_') throw new WowzaHttpError({ server: 'wse-1', endpoint: 'x', url: 'x' }, 500, 'boom');
      return { streamrecorder: [recorder('from-c')] };
    });
    const out = new MetricSet();
    await recorderCollector.poll(ctx, out);
    expect(out.samples('wowza_stream_recorder_recording').map((s) => s.labels.recorder).sort()).toEqual(['from-c', 'ok']);
    expect(out.drops.get('streamrecorder\u0000unreadable')).toBe(1);
  });

  it('keeps a state it does not know, bounded: 20 distinct per server, then other', async () => {
    const states = Array.from({ length: 25 }, (_, i) => recorder(`r${i}`, `Weird state ${i}`));
    const { ctx } = context({ instances: [instance('a', states)] }, async () => ({ streamrecorder: [] }));
    const out = new MetricSet();
    await recorderCollector.poll(ctx, out);
    const labels = out.samples('wowza_stream_recorder_info').map((s) => s.labels.state);
    expect(new Set(labels).size).toBe(21);
    expect(labels.filter((l) => l === 'other')).toHaveLength(5);
    expect([...(out.unknowns.get('recorderState') ?? new Map()).keys()]).toHaveLength(21);
  });
});

describe('the recorder fields a real server writes (issue 38)', () => {
  it("recordingStartTime in Wowza's yyyy-MM-dd-HH.mm.ss.SSS-zzz, and the state in the server's case", async () => {
    // Verbatim from a real 4.7 server's streamrecorders answer (test/fixtures/real-world, wowza-api.md).
    const real = { ...recorder('r1', 'Recording in Progress'), recordingStartTime: '2019-06-07-18.15.28.934-+08:00' };
    const { ctx } = context({ instances: [instance('a', [real])] }, async () => ({}));
    const out = new MetricSet();
    await recorderCollector.poll(ctx, out);
    expect(out.samples('wowza_stream_recorder_start_timestamp_seconds')[0]!.value).toBe(Date.parse('2019-06-07T18:15:28.934+08:00') / 1000);
    expect(out.samples('wowza_stream_recorder_recording')[0]!.value).toBe(1);
    expect(out.samples('wowza_stream_recorder_info')[0]!.labels.state).toBe('Recording in progress');
    expect([...out.drops.keys()]).toEqual([]);
    expect(out.unknowns.size).toBe(0);
  });
});

describe('a recorder error string that quotes the WSE password (issue 47)', () => {
  it('reaches neither the warn log nor /api/v1/status, in any form', async () => {
    const password = 'Wse!pa5s"w\\rd';
    // What serve registers from the configuration at start.
    registerSecret(password, 'admin');
    const forms = Object.values(secretForms(password, 'admin'));
    const said = `Failed to open rtmp://admin:${password}@10.0.0.1/live for writing: ${forms.join(' | ')}; Authorization: Basic ${forms.at(-1)}`;
    const lines: string[] = [];
    const log = createLogger({ level: 'debug', destination: new Writable({ write: (c: Buffer, _e, cb) => cb(void lines.push(c.toString('utf8'))) }) });
    const { ctx } = context({ instances: [instance('live', [{ ...recorder('rec1', 'Waiting for stream'), recorderErrorString: said }])] }, async () => ({}));
    const polled = { ...ctx, log, notices: new Notices() } as PollContext;
    const out = new MetricSet();
    await recorderCollector.poll(polled, out);
    expect(out.samples('wowza_stream_recorder_error')[0]!.value).toBe(1);

    const facts = new StatusFacts();
    facts.record({ server: 'wse-1', collector: 'recorder' } as PollJobSpec, { collector: 'recorder', ok: true, seconds: 0, set: out, reached: true });
    const target = { name: 'wse-1', url: 'http://127.0.0.1:8087' } as WowzaTarget;
    const status = await buildStatus({ startedAt: 0, ready: true, shard: undefined, servers: new Map([['wse-1', target]]), reached: () => true, jobs: [], facts, registry: new Registry() });
    const shown = status.servers[0]!.recorders![0]!.error!;
    expect(shown).toMatch(/^Failed to open rtmp:\/\/10\.0\.0\.1\/live for writing: \[REDACTED\]/);
    const log_ = lines.join('');
    expect(log_).toMatch(/stream recorder reports an error/);
    // The log is JSON: what it holds is searched as written and as read back.
    const logged = lines.map((l) => JSON.parse(l) as { message?: string }).map((l) => l.message ?? '').join('\n');
    const statusJson = JSON.stringify(status);
    const leaks = [log_, logged, shown, statusJson].flatMap((text, i) => secretLeaks(['log', 'log message', 'status error', 'status JSON'][i]!, text, password, 'admin'));
    expect(leaks).toEqual([]);
  });
});

describe('recorderStartSeconds', () => {
  it('reads the zone forms of Java z, and refuses to guess', async () => {
    const { recorderStartSeconds } = await import('../../../src/wowza/recorder-time.js');
    const at = (iso: string) => Date.parse(iso) / 1000;
    expect(recorderStartSeconds('2019-06-07-18.15.28.934-+08:00')).toBe(at('2019-06-07T18:15:28.934+08:00'));
    expect(recorderStartSeconds('2019-06-07-18.15.28.934-GMT-05:30')).toBe(at('2019-06-07T18:15:28.934-05:30'));
    expect(recorderStartSeconds('2019-06-07-18.15.28.934-UTC')).toBe(at('2019-06-07T18:15:28.934Z'));
    expect(recorderStartSeconds('2019-01-07-18.15.28.934-PST')).toBe(at('2019-01-07T18:15:28.934-08:00'));
    expect(recorderStartSeconds('2025-01-14T12:45:22.000Z')).toBe(at('2025-01-14T12:45:22.000Z'));
    // CST is China or US Central; a time without a zone is anybody's local time; nonsense is nonsense.
    expect(recorderStartSeconds('2019-06-07-18.15.28.934-CST')).toBeUndefined();
    expect(recorderStartSeconds('2019-06-07 18:15:28')).toBeUndefined();
    expect(recorderStartSeconds('2019-13-07-18.15.28.934-UTC')).toBeUndefined();
    expect(recorderStartSeconds('yesterday')).toBeUndefined();
  });
});
