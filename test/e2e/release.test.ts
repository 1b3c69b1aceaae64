import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, posix } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator } from '@wowza-exporter/simulator';
import { CLI, samples } from '../helpers/exporter-process.js';
import { freePort, waitFor } from '../helpers/ports.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const run = promisify(execFile);

/**
 * npm's own settings only, without the ones `npm test` passes down to its children (prefix, lifecycle, global
 * flags), so that an install here is what a user's shell would run; the cache stays the one `npm ci` filled.
 */
function npmEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.toLowerCase().startsWith('npm_') || /^npm_config_(cache|registry|userconfig)$/i.test(k)) env[k] = v;
  }
  // The installed CLI starts with `#!/usr/bin/env node`: the node running these tests.
  env.PATH = `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`;
  return env;
}

/** Runs npm; the outcome, never a throw, so that an offline machine can be told from a broken package. */
async function npm(args: string[], cwd: string): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout, stderr } = await run('npm', args, { cwd, env: npmEnv(), timeout: 300_000, maxBuffer: 16 * 1024 * 1024 });
    return { ok: true, output: `${stdout}${stderr}` };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}${e.message}` };
  }
}

/** The registry cannot be reached and the cache lacks a package: the only reason the install tests may skip. */
const OFFLINE = /ENOTCACHED|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH/;

async function install(args: string[], cwd: string, skip: () => void): Promise<string> {
  const res = await npm([...args, '--prefer-offline', '--no-audit', '--no-fund', '--foreground-scripts'], cwd);
  if (!res.ok && OFFLINE.test(res.output)) {
    console.warn(`\n!!! SKIPPED: npm ${args.join(' ')} — the registry is unreachable and the npm cache lacks a package !!!\n${res.output.slice(-1000)}\n`);
    skip();
  }
  expect(res.ok, res.output).toBe(true);
  return res.output;
}

describe('npm run release: the tarball an operator installs', () => {
  let dir: string;
  let tgz: string;
  let entries: string[];
  beforeAll(async () => {
    if (!existsSync(CLI)) throw new Error('dist/ is missing: run `npm run build` first (npm test does it)');
    dir = mkdtempSync(join(tmpdir(), 'wowza-release-'));
    // `npm run release` is the build and then this script; the build is the one npm test made.
    const { stdout } = await run(process.execPath, [join(ROOT, 'scripts/release.mjs'), '--out', join(dir, 'release')], { cwd: ROOT, env: npmEnv(), timeout: 120_000 });
    tgz = join(dir, 'release', `wowza-exporter-${VERSION}.tgz`);
    expect(stdout).toContain(tgz);
    entries = (await run('tar', ['-tzf', tgz], { maxBuffer: 16 * 1024 * 1024 })).stdout.split('\n').filter((l) => l && !l.endsWith('/'));
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('writes SHA256SUMS with the tarball\'s sum, in the format `sha256sum -c` checks', () => {
    const sum = createHash('sha256').update(readFileSync(tgz)).digest('hex');
    expect(readFileSync(join(dir, 'release/SHA256SUMS'), 'utf8')).toBe(`${sum}  wowza-exporter-${VERSION}.tgz\n`);
  });

  it('holds the Apache 2.0 LICENSE, the bundled CLI, dashboards, rules and deploy material; under 1 MB', async () => {
    expect(readFileSync(tgz).length).toBeLessThan(1024 * 1024);
    expect(entries).toEqual(expect.arrayContaining([
      'package/LICENSE',
      'package/package.json',
      'package/README.md',
      // The README's details (the systemd steps among them) live in docs/, which the README links.
      'package/docs/operations.md',
      'package/docs/configuration.md',
      'package/dist/cli.js',
      'package/dist/chunks/encode-worker.js',
      'package/dist/chunks/build-info.json',
      'package/dashboards/wowza-server.json',
      'package/deploy/prometheus/rules/wowza.rules.yml',
      'package/deploy/systemd/wowza-exporter.service',
      'package/deploy/config.example.yaml',
    ]));
    const license = (await run('tar', ['-xzOf', tgz, 'package/LICENSE'])).stdout;
    expect(license).toBe(readFileSync(join(ROOT, 'LICENSE'), 'utf8'));
    expect(license).toMatch(/^\s*Apache License\s+Version 2\.0, January 2004\s+http:\/\/www\.apache\.org\/licenses\//);
    expect(license).toContain('END OF TERMS AND CONDITIONS');
  });

  it('holds no tsc per-module output, source maps, tests, sources or demo secrets', () => {
    // Of dist/, only the bundle: what `wowza-exporter` runs.
    expect(entries.filter((e) => e.startsWith('package/dist/') && !/^package\/dist\/(cli\.js|chunks\/[^/]+\.(js|json))$/.test(e))).toEqual([]);
    expect(entries.filter((e) => e.endsWith('.map'))).toEqual([]);
    expect(entries.filter((e) => /(^|\/)(test|tests|bench|src)\/|\.(test|spec)\.[a-z]+$/.test(e))).toEqual([]);
    expect(entries.filter((e) => /password|secret|\.key$|\.pem$/.test(e))).toEqual([]);
  });

  it("pins the dependencies to the versions the build was tested with (npm-shrinkwrap.json from the lock): the bundle loads files inside yargs and undici by path", async () => {
    expect(entries).toContain('package/npm-shrinkwrap.json');
    const shrinkwrap = JSON.parse((await run('tar', ['-xzOf', tgz, 'package/npm-shrinkwrap.json'], { maxBuffer: 16 * 1024 * 1024 })).stdout) as { packages: Record<string, { version?: string }> };
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };
    for (const dep of ['node_modules/yargs', 'node_modules/undici', 'node_modules/prom-client']) expect(shrinkwrap.packages[dep]?.version, dep).toBe(lock.packages[dep]!.version);
  });

  it('every module the bundle imports by a relative path is in the tarball', async () => {
    const missing: string[] = [];
    for (const entry of entries.filter((e) => e.startsWith('package/dist/') && e.endsWith('.js'))) {
      const text = (await run('tar', ['-xzOf', tgz, entry], { maxBuffer: 16 * 1024 * 1024 })).stdout;
      // Static and dynamic imports, and the encoder's worker, started by its URL.
      for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|new URL\(\s*(?=["'][^"']+\.js["']))["'](\.{1,2}\/[^"']+)["']/g)) {
        const target = posix.normalize(posix.join(posix.dirname(entry), m[1]!));
        if (!entries.includes(target)) missing.push(`${entry} -> ${m[1]!}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('npm install -g into a clean prefix runs no build script, and gives `wowza-exporter --version` and a serve that reaches wowza_up 1', async (ctx) => {
    const prefix = join(dir, 'prefix');
    const output = await install(['install', '-g', '--prefix', prefix, tgz], dir, () => ctx.skip());
    // --foreground-scripts prints a `> wowza-exporter@… <script>` banner for any script of the package that ran.
    expect(output).not.toMatch(/> wowza-exporter@|prepare|tsc/);
    const bin = join(prefix, 'bin/wowza-exporter');
    const env = npmEnv();

    // Run from the temporary folder: nothing can resolve from this checkout's node_modules.
    const version = await run(bin, ['--version'], { cwd: dir, env });
    expect(version.stdout).toMatch(new RegExp(`^wowza-exporter, version ${VERSION.replaceAll('.', '\\.')} `));

    const sim = await startSimulator({ auth: 'basic' });
    const port = await freePort();
    const proc = spawn(bin, ['serve', '--web.listen-address', `127.0.0.1:${port}`, '--wowza.url', sim.url, '--wowza.username', sim.username], {
      cwd: dir,
      env: { ...env, WOWZA_PASSWORD: sim.password },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise((resolve) => proc.on('exit', resolve));
    try {
      await waitFor(`wowza_up 1 from the installed exporter (output so far: ${out.slice(-1000)})`, async () => {
        if (proc.exitCode !== null) throw new Error(`the installed exporter exited with ${proc.exitCode}: ${out.slice(-2000)}`);
        const res = await fetch(`http://127.0.0.1:${port}/metrics`);
        return samples(await res.text(), 'wowza_up')[0]?.value === 1 ? true : undefined;
      }, 90_000);
    } finally {
      proc.kill('SIGTERM');
      await exited;
      await sim.close();
    }
  });

  it('the systemd layout: unpacked into a folder, `npm install --omit=dev` there runs no build script, and `node dist/cli.js` runs', async (ctx) => {
    const opt = join(dir, 'opt/wowza-exporter');
    mkdirSync(opt, { recursive: true });
    await run('tar', ['-xzf', tgz, '-C', opt, '--strip-components=1']);
    const output = await install(['install', '--omit=dev'], opt, () => ctx.skip());
    expect(output).not.toMatch(/> wowza-exporter@|prepare|tsc/);
    const version = await run(process.execPath, [join(opt, 'dist/cli.js'), '--version'], { cwd: dir, env: npmEnv() });
    expect(version.stdout).toMatch(new RegExp(`^wowza-exporter, version ${VERSION.replaceAll('.', '\\.')} `));
  });
});
