import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { startSimulator, type Simulator, type SimulatorOptions } from '@wowza-exporter/simulator';
import { authorizationHeader, newCnonce, parseChallenges, pickDigestChallenge, toDigestChallenge, type DigestChallenge } from '../../src/wowza/digest.js';

const MACHINE = '/v2/machine/monitoring/current';
const run = promisify(execFile);

async function get(sim: Simulator, path: string, authorization?: string, accept = 'application/json') {
  const headers: Record<string, string> = {};
  if (accept) headers.accept = accept;
  if (authorization) headers.authorization = authorization;
  const res = await request(sim.url + path, { headers });
  const text = await res.body.text();
  const www = res.headers['www-authenticate'];
  return { status: res.statusCode, text, contentType: String(res.headers['content-type']), challenges: www === undefined ? [] : Array.isArray(www) ? www : [www] };
}

const basic = (u: string, p: string) => 'Basic ' + Buffer.from(`${u}:${p}`).toString('base64');

async function withSim(opts: SimulatorOptions, fn: (sim: Simulator) => Promise<void>) {
  const sim = await startSimulator(opts);
  try {
    await fn(sim);
  } finally {
    await sim.close();
  }
}

/**
 * A minimal digest client over the exporter's primitives (src/wowza/digest.ts): one challenge, our own nonce counts.
 * The simulator checks the answers with its own code (packages/simulator/src/digest.ts), so each checks the other.
 */
async function challenge(sim: Simulator, path = MACHINE): Promise<DigestChallenge> {
  const r = await get(sim, path);
  expect(r.status).toBe(401);
  return pickDigestChallenge(r.challenges)!;
}
const digest = (c: DigestChallenge, nc: number, password = 'admin', uri = MACHINE) =>
  authorizationHeader(c, { username: 'admin', password, method: 'GET', uri, nc, cnonce: newCnonce() });

describe('simulator Basic auth', () => {
  it('is the default: no or wrong credentials get 401 with a Basic challenge', async () => {
    await withSim({}, async (sim) => {
      const none = await get(sim, MACHINE);
      expect(none.status).toBe(401);
      expect(none.challenges).toEqual(['Basic realm="Wowza"']);
      expect(JSON.parse(none.text)).toMatchObject({ success: false, code: '401' });
      const html = await get(sim, MACHINE, undefined, '');
      expect(html.contentType).toMatch(/text\/html/);
      expect(html.text).toContain('401 Unauthorized');
      expect((await get(sim, MACHINE, basic('admin', 'wrong'))).status).toBe(401);
      expect((await get(sim, MACHINE, basic('root', 'admin'))).status).toBe(401);
      expect((await get(sim, MACHINE, 'Basic !!!')).status).toBe(401);
      expect((await get(sim, MACHINE, basic('admin', 'admin'))).status).toBe(200);
      expect(sim.counters.authChallenges).toBe(5);
      expect(sim.counters.staleChallenges).toBe(0);
    });
  });

  it('revokes the old password with setPassword', async () => {
    await withSim({ username: 'ops', password: 'p@ss:word' }, async (sim) => {
      expect((await get(sim, MACHINE, basic('ops', 'p@ss:word'))).status).toBe(200);
      sim.setPassword('rotated');
      expect(sim.password).toBe('rotated');
      expect((await get(sim, MACHINE, basic('ops', 'p@ss:word'))).status).toBe(401);
      expect((await get(sim, MACHINE, basic('ops', 'rotated'))).status).toBe(200);
    });
  });

  it('asks nothing with auth none', async () => {
    await withSim({ auth: 'none' }, async (sim) => {
      expect((await get(sim, MACHINE)).status).toBe(200);
    });
  });
});

describe('simulator Digest auth', () => {
  it('challenges like a real server: realm Wowza, domain /, qop auth, nonce base64 of epoch-ms:hex', async () => {
    await withSim({ auth: 'digest' }, async (sim) => {
      const r = await get(sim, MACHINE);
      expect(r.status).toBe(401);
      expect(r.challenges).toHaveLength(1);
      expect(r.challenges[0]).toMatch(/^Digest realm="Wowza", domain="\/", nonce="[A-Za-z0-9+/=]+", algorithm=MD5, qop="auth"$/);
      const c = toDigestChallenge(parseChallenges(r.challenges)[0]!)!;
      const [epoch, hex] = Buffer.from(c.nonce, 'base64').toString().split(':');
      expect(hex).toMatch(/^[0-9a-f]{16,}$/);
      expect(Math.abs(Number(epoch) - Date.now())).toBeLessThan(5000);
      expect(c).toMatchObject({ realm: 'Wowza', domain: '/', qop: ['auth'], stale: false, algorithm: 'MD5' });
    });
  });

  it('accepts MD5 and SHA-256 answers and reuses a nonce with increasing nc without new challenges', async () => {
    await withSim({ auth: 'digest', digestAlgorithms: ['SHA-256', 'MD5'] }, async (sim) => {
      const r = await get(sim, MACHINE);
      expect(r.challenges.map((h) => /algorithm=([\w-]+)/.exec(h)![1])).toEqual(['SHA-256', 'MD5']);
      // Both challenges carry the same nonce, so the count goes on across them.
      let nc = 0;
      for (const c of parseChallenges(r.challenges).map((x) => toDigestChallenge(x)!)) {
        for (let i = 0; i < 3; i++) expect((await get(sim, MACHINE, digest(c, ++nc))).status).toBe(200);
      }
      expect(sim.counters.authChallenges).toBe(1);
    });
  });

  it('refuses a wrong password with 401 without stale, and an algorithm it did not offer', async () => {
    await withSim({ auth: 'digest' }, async (sim) => {
      const c = await challenge(sim);
      const wrong = await get(sim, MACHINE, digest(c, 1, 'nope'));
      expect(wrong.status).toBe(401);
      expect(pickDigestChallenge(wrong.challenges)!.stale).toBe(false);
      expect(JSON.parse(wrong.text)).toMatchObject({ code: '401' });
      expect((await get(sim, MACHINE, digest({ ...c, algorithm: 'SHA-256' }, 2))).status).toBe(401);
      expect((await get(sim, MACHINE, basic('admin', 'admin'))).challenges[0]).toMatch(/^Digest /);
      expect(sim.counters.staleChallenges).toBe(0);
    });
  });

  it('answers an expired nonce with stale=true, and the fresh nonce works', async () => {
    await withSim({ auth: 'digest', nonceTtlMs: 100 }, async (sim) => {
      const c = await challenge(sim);
      expect((await get(sim, MACHINE, digest(c, 1))).status).toBe(200);
      await new Promise((r) => setTimeout(r, 150));
      const expired = await get(sim, MACHINE, digest(c, 2));
      expect(expired.status).toBe(401);
      const fresh = pickDigestChallenge(expired.challenges)!;
      expect(fresh.stale).toBe(true);
      expect(expired.challenges[0]).toMatch(/, stale=true$/);
      expect((await get(sim, MACHINE, digest(fresh, 1))).status).toBe(200);
      expect(sim.counters.staleChallenges).toBe(1);
      // An expired nonce with a wrong password is a wrong password, not stale.
      await new Promise((r) => setTimeout(r, 150));
      expect(pickDigestChallenge((await get(sim, MACHINE, digest(fresh, 2, 'bad'))).challenges)!.stale).toBe(false);
    });
  });

  it('by default accepts nonce counts out of order but not a replayed one', async () => {
    await withSim({ auth: 'digest' }, async (sim) => {
      const c = await challenge(sim);
      expect((await get(sim, MACHINE, digest(c, 3))).status).toBe(200);
      expect((await get(sim, MACHINE, digest(c, 2))).status).toBe(200);
      const replay = await get(sim, MACHINE, digest(c, 2));
      expect(replay.status).toBe(401);
      expect(pickDigestChallenge(replay.challenges)!.stale).toBe(false);
    });
  });

  it('with strictNonceCount rejects a count that is not above the last one, without stale', async () => {
    await withSim({ auth: 'digest', strictNonceCount: true }, async (sim) => {
      const c = await challenge(sim);
      expect((await get(sim, MACHINE, digest(c, 3))).status).toBe(200);
      const late = await get(sim, MACHINE, digest(c, 2));
      expect(late.status).toBe(401);
      expect(pickDigestChallenge(late.challenges)!.stale).toBe(false);
      expect((await get(sim, MACHINE, digest(c, 4))).status).toBe(200);
    });
  });

  it('answers 400 when the digest uri is not the request target', async () => {
    await withSim({ auth: 'digest' }, async (sim) => {
      const c = await challenge(sim);
      const r = await get(sim, MACHINE, digest(c, 1, 'admin', '/v2/servers/_defaultServer_/status'));
      expect(r.status).toBe(400);
      expect(JSON.parse(r.text).message).toMatch(/uri does not match/);
    });
  });

  it('interoperates with curl --digest (MD5 and SHA-256)', async () => {
    let curl = true;
    await run('curl', ['--version']).catch(() => (curl = false));
    if (!curl) {
      console.warn('curl not installed: skipping the curl interop check');
      return;
    }
    for (const algorithm of ['MD5', 'SHA-256'] as const) {
      await withSim({ auth: 'digest', digestAlgorithms: [algorithm] }, async (sim) => {
        const args = ['-sS', '--noproxy', '*', '--digest', '-u', 'admin:admin', '-H', 'Accept: application/json', `${sim.url}${MACHINE}?x=1`];
        const { stdout } = await run('curl', args);
        expect(JSON.parse(stdout)).toMatchObject({ cpuIdle: expect.any(Number), heapUsed: expect.any(Number) });
        const denied = await run('curl', ['-sS', '--noproxy', '*', '-o', '/dev/null', '-w', '%{http_code}', '--digest', '-u', 'admin:bad', `${sim.url}${MACHINE}`]);
        expect(denied.stdout).toBe('401');
      });
    }
  });
});
