import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/exporter-process.js';

/**
 * Issue 38: the real Wowza Streaming Cloud error envelopes of the corpus (test/fixtures/real-world/video-api,
 * PROVENANCE.md) served over loopback to the CLI's Wowza Video path (`wowza-exporter schedules list`), and the error the
 * user sees checked against each sample: its status, code, title and message.
 *
 * Served: each error envelope as the answer to `GET /schedules`, with its `meta.status` as the HTTP status and its bytes
 * unchanged. Only `error-401-invalid-key-length.json` was an answer to that call (Wowza's Java SDK listing schedules
 * with a bad key); the two 422s answered `POST /live_streams` and `PUT /live_streams/{id}/start`, calls the exporter
 * never makes: they are served to the one call it makes, to show an envelope without `links` is read the same.
 * Not served: `wsc-v1-sandbox-2017/live_streams-list-password-redacted.json` and `live_stream-state-started.json`:
 * live stream answers, a resource the exporter never reads (it reads schedules only), so there is no value of
 * theirs it could export or show.
 */
const DIR = join(import.meta.dirname, '../fixtures/real-world/video-api');
const ERRORS = ['wsc-sdk-java/error-401-invalid-key-length.json', 'cn1libs/error-422-invalid-interaction-passthrough.json', 'cn1libs/error-422-no-payg-transcoded-transcoders-remaining.json'];
const TOKEN = 'real-world-video-token';

interface Meta {
  status: number;
  code: string;
  title: string;
  message: string;
  description: string;
}

describe('real Streaming Cloud error envelopes through `wowza-exporter schedules list`', () => {
  let server: Server;
  let url: string;
  let dir: string;
  let current = '';
  const asked: Array<{ path: string; auth: string | undefined }> = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'real-video-'));
    writeFileSync(join(dir, 'token'), TOKEN, { mode: 0o600 });
    server = createServer((req, res) => {
      asked.push({ path: new URL(req.url ?? '/', 'http://x').pathname, auth: req.headers.authorization });
      const bytes = readFileSync(join(DIR, current));
      const meta = (JSON.parse(bytes.toString('utf8')) as { meta: Meta }).meta;
      res.writeHead(meta.status, { 'content-type': 'application/json; charset=utf-8' }).end(bytes);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1.11`;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  for (const file of ERRORS) {
    it(`${file}: exit 1, and the message names its status, code, title and message`, async () => {
      current = file;
      const meta = (JSON.parse(readFileSync(join(DIR, file), 'utf8')) as { meta: Meta }).meta;
      const run = await runCli(['schedules', 'list', '--video.url', url, '--video.token-file', join(dir, 'token')]);
      expect(run.code, run.stderr).toBe(1);
      expect(asked.at(-1)).toEqual({ path: '/api/v1.11/schedules', auth: `Bearer ${TOKEN}` });
      // The envelope's empty description adds nothing; its message is said once.
      expect(meta.description).toBe('');
      expect(run.stderr).toContain(`GET /schedules: HTTP ${meta.status} ${meta.code} (${meta.title}): ${meta.message}`);
      if (meta.status === 401) expect(run.stderr).toContain('the API token was refused');
      expect(run.stdout + run.stderr).not.toContain(TOKEN);
    });
  }
});
