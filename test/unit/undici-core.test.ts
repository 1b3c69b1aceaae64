import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, request } from '../../src/base/undici-core.js';

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
    const built = fileURLToPath(new URL('../../dist/base/undici-core.js', import.meta.url));
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

  it('the bundle leaves undici\'s HTTP/2 client out and its rarely taken paths in node_modules, where they resolve from the bundle', () => {
    const chunks = fileURLToPath(new URL('../../dist/chunks/', import.meta.url));
    const modules = JSON.parse(readFileSync(join(chunks, 'modules.json'), 'utf8')) as Record<string, string[]>;
    const bundled = Object.values(modules).flat();
    expect(bundled).toContain('node_modules/undici/lib/dispatcher/client-h1.js');
    for (const out of ['client-h2.js', 'llhttp/llhttp-wasm.js', 'web/fetch/body.js']) expect(bundled.filter((m) => m.endsWith(out))).toEqual([]);
    // The parser for machines without WebAssembly SIMD and the FormData body code, as the chunk requires them.
    const script = `
      import { createRequire } from 'node:module';
      const require = createRequire(${JSON.stringify(join(chunks, 'undici-core.js'))});
      console.log(JSON.stringify([require('undici/lib/llhttp/llhttp-wasm.js').length > 0, typeof require('undici/lib/web/fetch/body.js').extractBody]));
    `;
    expect(JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }))).toEqual([true, 'function']);
  });
});
