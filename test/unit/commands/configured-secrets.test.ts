import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { registerConfiguredSecrets } from '../../../src/commands/configured-secrets.js';
import { loadConfig } from '../../../src/config/load.js';
import { scrubSecrets } from '../../../src/base/secret-scrubber.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('registerConfiguredSecrets', () => {
  it('makes every secret of a configuration scrubbed: server and module passwords, the Video token, the webhook secret', () => {
    dir = mkdtempSync(join(tmpdir(), 'configured-secrets-'));
    const file = (name: string, value: string) => {
      writeFileSync(join(dir!, name), `${value}\n`, { mode: 0o600 });
      return join(dir!, name);
    };
    const config = file(
      'config.yaml',
      stringify({
        servers: [{ url: 'http://127.0.0.1:8087', username: 'admin', password_file: file('server', 'server-Pw!1') }],
        modules: { edge: { username: 'probe', password_file: file('module', 'module-Pw!2'), allowed_targets: ['http://10\\.0\\.0\\.1:8087'] } },
        webhooks: { enabled: true, secret_file: file('webhook', 'webhook-Secret!3') },
        video: { token_file: file('video', 'eyJvideo.token.sig4') },
      }),
    );
    const secrets = ['server-Pw!1', 'module-Pw!2', 'webhook-Secret!3', 'eyJvideo.token.sig4'];
    const text = secrets.map((s) => `${s} ${encodeURIComponent(s)} ${Buffer.from(s).toString('base64')}`).join(' ');
    expect(scrubSecrets(text)).toBe(text);
    registerConfiguredSecrets(loadConfig({ config }, {}));
    expect(scrubSecrets(text)).toBe(Array(secrets.length * 3).fill('[REDACTED]').join(' '));
  });
});
