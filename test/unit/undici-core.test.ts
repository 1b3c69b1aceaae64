import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, request } from '../../src/undici-core.js';

describe('undici-core: undici Agent and request() without the rest of undici', () => {
  let server: Server;
  let base: string;
  const agent = new Agent({ connections: 2 });

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.url?.startsWith('/slow')) return; // never answers
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ method: req.method, url: req.url, body: Buffer.concat(chunks).toString(), auth: req.headers.authorization ?? null }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await agent.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('sends method, path with query, headers and body as undici does', async () => {
    const get = await request(new URL(`${base}/v2/servers/_defaultServer_?order=newestFirst&x=a%20b`), { dispatcher: agent, headers: { authorization: 'Basic x' } });
    expect(get.statusCode).toBe(200);
    expect(await get.body.json()).toEqual({ method: 'GET', url: '/v2/servers/_defaultServer_?order=newestFirst&x=a%20b', body: '', auth: 'Basic x' });
    const post = await request(`${base}/push`, { dispatcher: agent, method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } });
    expect(await post.body.json()).toEqual({ method: 'POST', url: '/push', body: '{"a":1}', auth: null });
  });

  it('stops a request when its signal aborts', async () => {
    const controller = new AbortController();
    const pending = request(`${base}/slow`, { dispatcher: agent, signal: controller.signal });
    setTimeout(() => controller.abort(new Error('deadline')), 50);
    await expect(pending).rejects.toThrow('deadline');
  });

  it('loads neither undici’s index nor fetch (run in a fresh process, from the build)', () => {
    const built = fileURLToPath(new URL('../../dist/undici-core.js', import.meta.url));
    expect(existsSync(built), 'run `npm run build` first').toBe(true);
    const script = `
      import { createRequire } from 'node:module';
      const { Agent } = await import(${JSON.stringify(built)});
      new Agent().close();
      const loaded = Object.keys(createRequire(import.meta.url).cache).filter((f) => f.includes('/undici/'));
      console.log(JSON.stringify(loaded.map((f) => f.slice(f.lastIndexOf('/undici/') + 8))));
    `;
    const loaded = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as string[];
    expect(loaded).toContain('lib/dispatcher/agent.js');
    expect(loaded).not.toContain('index.js');
    expect(loaded.filter((f) => f.startsWith('lib/web/'))).toEqual([]);
  });
});
