import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import { LogHost } from '../../../src/exporter/log-host.js';
import { silentLogger } from '../../../src/base/logger.js';
import { createSelfMetrics } from '../../../src/metrics/self-metrics.js';
import type { WebhookEvent } from '../../../src/webhooks/event.js';

const dir = mkdtempSync(join(tmpdir(), 'log-host-'));

function logsConfig(out: string) {
  const path = join(dir, `config-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(path, `logs:\n  positions_file: ${join(dir, 'positions.json')}\n  sinks:\n    - type: file\n      path: ${out}\n`, { mode: 0o600 });
  return loadConfig({ config: path }, {});
}

const event: WebhookEvent = {
  id: 'e-1',
  name: 'stream.started',
  timestamp: Date.UTC(2026, 10, 26, 9, 0, 0),
  source: 'wse-1',
  context: { vhost: '_defaultVHost_', app: 'live', appInstance: '_definst_', stream: 'cam 1', state: 'started' },
} as WebhookEvent;

describe('log host', () => {
  it('delivers webhook events into the sinks beside the logs, and has them written when it stops', async () => {
    const out = join(dir, 'out.ndjson');
    let started = 0;
    const host = new LogHost({ self: createSelfMetrics(), logger: silentLogger(), onStart: () => started++ });
    await host.start(logsConfig(out), []);
    expect(host.running).toBe(true);
    expect(started).toBe(1);
    expect(host.status()).toEqual({ followers: [], sinkNames: ['file'] });
    await host.publishEvent('wse-1', event);
    await host.stop();
    expect(host.running).toBe(false);
    const records = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ server: 'wse-1', log_type: 'webhook', 'x-event': 'stream.started', 'event-id': 'e-1', 'x-sname': 'cam 1', 'x-app': 'live' });
  });

  it('is inert while logs are off: events go nowhere, no status, following a server does nothing', async () => {
    const host = new LogHost({ self: createSelfMetrics(), logger: silentLogger() });
    await host.start(loadConfig({}, {}), []);
    expect(host.running).toBe(false);
    expect(host.status()).toBeUndefined();
    host.follow('wse-1', { name: 'wse-1', url: 'http://127.0.0.1:1' } as never);
    await host.publishEvent('wse-1', event);
    await host.unfollow('wse-1');
    await host.stop();
  });
});
