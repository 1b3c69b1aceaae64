import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { registerSecret } from '../../../src/base/secret-scrubber.js';
import { buildStatus, StatusFacts } from '../../../src/status/status-api.js';
import type { WowzaTarget } from '../../../src/wowza/client.js';
import { secretForms, secretLeaks } from '../../helpers/secret-forms.js';

describe('/api/v1/status', () => {
  it('shows no configured secret in any form, whatever error message holds one (issue 47)', async () => {
    const password = 'St4tus!pw';
    const token = 'video-token-2f9c';
    registerSecret(password, 'admin');
    registerSecret(token);
    const echo = (s: string, user?: string) => `the server said ${Object.values(secretForms(s, user)).join(' ')}`;
    const target = { name: 'wse-1', url: 'http://127.0.0.1:8087' } as WowzaTarget;
    const last = (error: string) => ({ ok: false, at: 0, seconds: 1, series: 0, reason: 'http', error, objects: { total: 2, failed: 1, lastReason: 'http', lastError: error } });
    const status = await buildStatus({
      startedAt: 0,
      ready: true,
      shard: undefined,
      servers: new Map([['wse-1', target]]),
      reached: () => false,
      downReason: () => ({ cause: echo(password, 'admin'), fix: 'check the password' }),
      jobs: [
        { server: 'wse-1', collector: 'machine', intervalMs: 10_000, last: last(echo(password, 'admin')) },
        { server: '', collector: 'video', intervalMs: 60_000, last: last(echo(token)) },
      ],
      facts: new StatusFacts(),
      registry: new Registry(),
      logs: { followers: [{ server: 'wse-1', logType: 'access', oldestUnackedSeconds: 0, lastError: { message: echo(password, 'admin'), at: 0, failing: true } }], sinkNames: [] },
    } as Parameters<typeof buildStatus>[0]);
    const json = JSON.stringify(status);
    expect(status.servers[0]!.collectors[0]!.error).toMatch(/^the server said \[REDACTED\]/);
    expect([...secretLeaks('status', json, password, 'admin'), ...secretLeaks('status', json, token)]).toEqual([]);
  });
});
