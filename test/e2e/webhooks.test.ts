import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { targetUrlFor } from '../../src/commands/webhooks.js';
import { startSimulator, type Simulator } from '@wowza-exporter/simulator';
import { signHs256 } from '../../src/webhooks/jwt.js';
import { runCli, samples, startExporterProcess, type RunningExporter } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';

/**
 * The webhook loop with the built CLI: `webhooks setup` configures a 4.9.6 simulator to deliver to a
 * running exporter; a stream stopping in the simulator reaches the exporter's receiver, which re-polls
 * at once (the poll interval is 30 s, so nothing else can explain a fresh value) and ships the event to
 * the log sinks. Bad deliveries are refused and counted while the exporter keeps serving.
 */

const V = '_defaultVHost_';
const SECRET = 'e2e-webhook-secret-7f3a';
const HOOK_PATH = '/webhooks/wowza';
const NEW_SERVER = 'Wowza Streaming Engine 4.9.6 build20250620000000';

describe('webhooks end to end', () => {
  let dir: string;
  let sim: Simulator;
  let exporter: RunningExporter;
  let secretFile: string;
  let sinkFile: string;
  let hookUrl: string;

  const setupArgs = (s: Simulator, target = hookUrl) => ['webhooks', 'setup', '--wowza.url', s.url, '--wowza.username', s.username, '--target-url', target, '--secret-file', secretFile];
  const env = () => ({ WOWZA_PASSWORD: sim.password });
  const writes = (s: Simulator) => Object.entries(s.counters.byRoute).filter(([route]) => /^(POST|PUT|DELETE) /.test(route));

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wowza-exporter-webhooks-'));
    secretFile = join(dir, 'webhook-secret');
    writeFileSync(secretFile, `${SECRET}\n`, { mode: 0o600 });
    sinkFile = join(dir, 'records.ndjson');
    const config = join(dir, 'config.yaml');
    writeFileSync(
      config,
      [
        'webhooks:',
        '  enabled: true',
        `  path: ${HOOK_PATH}`,
        `  secret_file: ${secretFile}`,
        'logs:',
        `  positions_file: ${join(dir, 'positions.json')}`,
        `  dead_letter_file: ${join(dir, 'dead-letter.ndjson')}`,
        '  follow_interval: 5s',
        '  batch: {max_wait: 100ms}',
        '  sinks:',
        `    - {type: file, path: ${sinkFile}}`,
        '',
      ].join('\n'),
    );
    sim = await startSimulator({ serverVersion: NEW_SERVER, frozen: true });
    exporter = await startExporterProcess(['--config', config, '--wowza.url', sim.url, '--wowza.username', sim.username, '--poll.interval', '30s'], env());
    hookUrl = `${exporter.url}${HOOK_PATH}`;
  });
  afterAll(async () => {
    await exporter?.stop();
    await sim?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('webhooks setup creates target, filter and listener once; a second run changes nothing', async () => {
    const first = await runCli(setupArgs(sim), { env: env() });
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('+ target wowza-exporter');
    expect(first.stdout).toContain('+ filter wowza-exporter');
    expect(first.stdout).toContain('+ server listener WebhookListener');
    expect(first.stdout).not.toContain(SECRET);
    expect(sim.counters.route('POST /v2/servers/{server}/webhooks/targets')).toBe(1);
    expect(sim.counters.route('POST /v2/servers/{server}/webhooks/filters')).toBe(1);
    expect(sim.counters.route('PUT /v2/servers/{server}')).toBe(1);

    sim.counters.reset();
    const second = await runCli(setupArgs(sim), { env: env() });
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('nothing to change');
    // Reads only (the webhooks wrapper and the server resource), writes nothing, and says = for each item.
    expect(writes(sim)).toEqual([]);
    // The exporter beside it polls and follows the logs of the same simulator: those routes are not the CLI's.
    const byCli = Object.keys(sim.counters.byRoute).filter((r) => !/\/(logs|logfiles|vhosts|status|monitoring)\b|\/machine\//.test(r));
    expect(byCli.sort()).toEqual(['GET /v2/servers/{server}', 'GET /v2/servers/{server}/webhooks']);
    expect(second.stdout.split('\n').filter((l) => /^[=~+] /.test(l))).toEqual([
      '= target wowza-exporter (unchanged)',
      '= filter wowza-exporter (unchanged)',
      '= server listener WebhookListener (unchanged)',
    ]);

    const status = await runCli(['webhooks', 'status', '--wowza.url', sim.url, '--wowza.username', sim.username], { env: env() });
    expect(status.code).toBe(0);
    expect(status.stdout).toContain('listener installed');
    // setup adds ?server=<name> so the receiver labels the events with the configured server name.
    expect(status.stdout).toContain(`target wowza-exporter: ${targetUrlFor(hookUrl, new URL(sim.url).host)} auth=jwt`);
    expect(status.stdout).not.toContain(SECRET);
  });

  it('a stopped stream reaches the exporter, which re-polls at once and ships the event', async () => {
    const connected = async () => samples(await exporter.metrics(), 'wowza_stream_connected', { application: 'cameras', stream: 'cam3' })[0]?.value;
    expect(await connected()).toBe(1);
    const deliveredBefore = sim.webhooks.deliveries.length;

    // The poll that shows it must be the event's, not the schedule's: scheduled polls of the instance collector come
    // 27-33 s apart (30 s, jitter 10 %), so one that ended less than 25 s after the last is a re-poll. Timing it against
    // the exporter's own poll timestamps, not a wall clock, holds on a busy machine too.
    const lastPoll = async () => samples(await exporter.metrics(), 'wowza_exporter_last_poll_timestamp_seconds', { collector: 'instance' })[0]!.value;
    let before = await lastPoll();
    // Stop the stream early in a poll period, so the next scheduled poll is at least 12 s away.
    if (Date.now() / 1000 - before > 15) {
      const last = before;
      before = await waitFor('the next scheduled poll', async () => {
        const t = await lastPoll();
        return t > last ? t : undefined;
      });
    }
    sim.topology.stopStream(V, 'cameras', 'cam3');
    await waitFor('wowza_stream_connected of cam3 to read 0', async () => ((await connected()) === 0 ? true : undefined), 60_000, 20);
    expect((await lastPoll()) - before).toBeLessThan(25);

    await sim.webhooks.settled();
    const attempts = sim.webhooks.deliveries.slice(deliveredBefore);
    expect(attempts.map((a) => [a.event, a.url, a.status])).toEqual([['stream.stopped', targetUrlFor(hookUrl, new URL(sim.url).host), 202]]);
    const text = await exporter.metrics();
    expect(samples(text, 'wowza_webhook_events_total', { event: 'stream.stopped', application: 'cameras' })[0]?.value).toBe(1);

    const record = await waitFor(
      'the webhook record in the file sink',
      () => {
        let lines: string[] = [];
        try {
          lines = readFileSync(sinkFile, 'utf8').split('\n').filter((l) => l !== '');
        } catch {
          return undefined; // not written yet
        }
        return lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((r) => r.log_type === 'webhook');
      },
      5000,
      50,
    );
    expect(record).toMatchObject({ log_type: 'webhook', 'x-event': 'stream.stopped', 'event-id': attempts[0]!.eventId, 'x-app': 'cameras', 'x-sname': 'cam3', state: 'stopped' });
  });

  it('with --auth header the server sends the secret as a static header to a receiver set to webhooks.auth: token; app events and dotted stream names arrive under the default criteria', async () => {
    // A receiver takes one kind of token: the static one is its own setting.
    const tokenConfig = join(dir, 'token-config.yaml');
    writeFileSync(tokenConfig, ['webhooks:', '  enabled: true', `  path: ${HOOK_PATH}`, `  secret_file: ${secretFile}`, '  auth: token', ''].join('\n'));
    const tokenExporter = await startExporterProcess(['--config', tokenConfig, '--wowza.url', sim.url, '--wowza.username', sim.username, '--poll.interval', '30s'], env());
    onTestFinished(() => tokenExporter.stop().then(() => undefined));
    const tokenHook = `${tokenExporter.url}${HOOK_PATH}`;
    const switched = await runCli([...setupArgs(sim, tokenHook), '--auth', 'header'], { env: env() });
    expect(switched.code).toBe(0);
    expect(switched.stdout).toContain('~ target wowza-exporter');
    expect(switched.stdout).toContain('headers.Authorization: (none) -> Bearer ***');
    expect(switched.stdout).toContain('= filter wowza-exporter (unchanged)');
    expect(switched.stdout).not.toContain(SECRET);
    sim.counters.reset();
    const again = await runCli([...setupArgs(sim, tokenHook), '--auth', 'header'], { env: env() });
    expect(again.stdout).toContain('nothing to change');
    expect(writes(sim)).toEqual([]);

    const before = sim.webhooks.deliveries.length;
    await sim.webhooks.fire({ name: 'app.shutdown', context: { vhost: V, app: 'cameras', appInstance: '_definst_' } });
    await sim.webhooks.fire({ name: 'stream.started', context: { vhost: V, app: 'cameras', appInstance: '_definst_', stream: 'cam1.sdp' } });
    await sim.webhooks.settled();
    // 202: the receiver took the static token (the target has no JWT auth any more).
    expect(sim.webhooks.deliveries.slice(before).map((a) => [a.event, a.status])).toEqual([
      ['app.shutdown', 202],
      ['stream.started', 202],
    ]);
    const text = await waitFor('the events counted', async () => {
      const t = await tokenExporter.metrics();
      return samples(t, 'wowza_webhook_events_total', { event: 'app.shutdown', application: 'cameras' })[0]?.value === 1 ? t : undefined;
    });
    expect(samples(text, 'wowza_webhook_events_total', { event: 'app.shutdown', application: 'cameras' })[0]?.value).toBe(1);

    // Back to JWT for the tests below.
    const back = await runCli(setupArgs(sim), { env: env() });
    expect(back.stdout).toContain('~ target wowza-exporter');
  });

  it('refuses forged, expired, oversized and malformed deliveries, counts them, and keeps serving', async () => {
    const now = Math.floor(Date.now() / 1000);
    let n = 0;
    // A fresh token per delivery, as the server signs them: a token is good for one event.
    const valid = () => signHs256({ iat: now, exp: now + 60, iss: 'test', jti: `e2e-${n++}` }, SECRET);
    const event = JSON.stringify({ id: 'manual-1', timestamp: Date.now(), name: 'stream.started', version: '1.0', context: { vhost: V, app: 'cameras', appInstance: '_definst_', stream: 'cam3' }, data: {} });
    const post = (body: string, token: string) => fetch(hookUrl, { method: 'POST', body, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` } });

    expect((await post(event, signHs256({ iat: now, exp: now + 60 }, 'not-the-secret'))).status).toBe(401);
    expect((await post(event, signHs256({ iat: now - 7200, exp: now - 3600 }, SECRET))).status).toBe(401);
    expect((await post('x'.repeat(200 * 1024), valid())).status).toBe(413);
    expect((await post('{"id": "manual-2", ', valid())).status).toBe(400);

    const text = await exporter.metrics();
    const rejected = (reason: string) => samples(text, 'wowza_webhook_rejected_total', { reason })[0]?.value;
    expect({ unauthorized: rejected('unauthorized'), expired: rejected('expired'), too_large: rejected('too_large'), malformed_json: rejected('malformed_json') }).toEqual({
      unauthorized: 1,
      expired: 1,
      too_large: 1,
      malformed_json: 1,
    });

    expect(exporter.proc.exitCode).toBeNull();
    expect((await fetch(`${exporter.url}/-/healthy`)).status).toBe(200);
    expect((await post(event, valid())).status).toBe(202);
  });

  it('tokens as a real server may sign them: one without jti carries several events of one second, a retry is acknowledged and counted once, a jti reused with another event is refused', async () => {
    const now = Math.floor(Date.now() / 1000);
    const post = (body: string, token: string) => fetch(hookUrl, { method: 'POST', body, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` } });
    const event = (id: string, stream: string) => JSON.stringify({ id, timestamp: Date.now(), name: 'stream.started', version: '1.0', context: { vhost: V, app: 'cameras', appInstance: '_definst_', stream }, data: {} });
    const count = async (stream: string) => {
      // The receiver labels events by event and application; the stream is in the last-event series.
      const text = await exporter.metrics();
      return { events: samples(text, 'wowza_webhook_events_total', { event: 'stream.started', application: 'cameras' })[0]?.value ?? 0, stream: samples(text, 'wowza_stream_last_event_timestamp_seconds', { stream }).length };
    };
    const replayedBefore = samples(await exporter.metrics(), 'wowza_webhook_rejected_total', { reason: 'replayed' })[0]?.value ?? 0;
    const { events: before } = await count('jti-a');

    // What the simulator (and, as far as anyone has shown, a 4.9.6 server) sends: iat, exp, iss, no jti.
    const shared = signHs256({ iat: now, exp: now + 60, iss: 'wse-e2e' }, SECRET);
    expect((await post(event('same-second-1', 'jti-a'), shared)).status).toBe(202);
    expect((await post(event('same-second-2', 'jti-b'), shared)).status).toBe(202);
    // The sender retries the first one: the same token, the same body.
    const retry = await post(event('same-second-1', 'jti-a'), shared);
    expect(retry.status).toBe(200);
    expect(await retry.text()).toContain('duplicate');
    const counted = await waitFor('the two events counted', async () => {
      const c = await count('jti-b');
      return c.events - before === 2 ? c : undefined;
    });
    expect(counted.stream).toBe(1);
    const text = await exporter.metrics();
    expect(samples(text, 'wowza_webhook_duplicates_total')[0]?.value).toBe(1);
    expect(samples(text, 'wowza_webhook_rejected_total', { reason: 'duplicate' })).toEqual([]);

    // A token that names itself (jti) is good for its one event (its id and body): again with it (the same bytes, as
    // a sender retries), a duplicate; with another, a replay.
    const once = signHs256({ iat: now, exp: now + 60, iss: 'wse-e2e', jti: 'e2e-once' }, SECRET);
    const onceBody = event('jti-1', 'jti-c');
    expect((await post(onceBody, once)).status).toBe(202);
    expect((await post(onceBody, once)).status).toBe(200);
    const replay = await post(event('jti-2', 'jti-d'), once);
    expect(replay.status).toBe(401);
    expect(await replay.text()).toContain('already came with another event');
    const after = await exporter.metrics();
    expect(samples(after, 'wowza_webhook_rejected_total', { reason: 'replayed' })[0]?.value).toBe(replayedBefore + 1);
    expect(samples(after, 'wowza_stream_last_event_timestamp_seconds', { stream: 'jti-d' })).toEqual([]);
    expect(samples(after, 'wowza_webhook_events_total', { event: 'stream.started', application: 'cameras' })[0]?.value).toBe(before + 3);
  });

  it('the simulator firing several events in one second (one token for them all): every one is taken, none refused', async () => {
    const rejectedBefore = samples(await exporter.metrics(), 'wowza_webhook_rejected_total').reduce((n, s) => n + s.value, 0);
    const statusRejected = async () => ((await (await fetch(`${exporter.url}/api/v1/status`)).json()) as { webhooks: { rejected: Record<string, number> } }).webhooks.rejected;
    const statusBefore = await statusRejected();
    const before = sim.webhooks.deliveries.length;
    const streams = ['burst1', 'burst2', 'burst3', 'burst4', 'burst5'];
    await Promise.all(streams.map((stream) => sim.webhooks.fire({ name: 'stream.stopped', context: { vhost: V, app: 'cameras', appInstance: '_definst_', stream } })));
    await sim.webhooks.settled();
    const attempts = sim.webhooks.deliveries.slice(before);
    expect(attempts.map((a) => a.status)).toEqual(streams.map(() => 202));
    const text = await exporter.metrics();
    for (const stream of streams) expect(samples(text, 'wowza_stream_last_event_timestamp_seconds', { stream, state: 'stopped' }), stream).toHaveLength(1);
    expect(samples(text, 'wowza_webhook_rejected_total').reduce((n, s) => n + s.value, 0)).toBe(rejectedBefore);
    // The status page's "rejected" line reads the same counts: nothing new on it.
    expect(await statusRejected()).toEqual(statusBefore);
  });

  it('webhooks setup against a server before 4.9.6 exits 1 and says why', async () => {
    const old = await startSimulator({ serverVersion: 'Wowza Streaming Engine 4.9.4 build20250114124522' });
    try {
      const res = await runCli(setupArgs(old), { env: { WOWZA_PASSWORD: old.password } });
      expect(res.code).toBe(1);
      expect(res.stderr).toContain('webhooks need Wowza Streaming Engine 4.9.6+');
      expect(writes(old)).toEqual([]);
    } finally {
      await old.close();
    }
  });
});
