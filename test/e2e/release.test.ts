import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, posix } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator } from '@wowza-exporter/simulator';
import { CLI, samples } from '../helpers/exporter-process.js';
import { brokenLinks } from '../helpers/markdown-links.js';
import { missingTool, promtoolPath } from '../helpers/prometheus.js';
import { freePort, waitFor } from '../helpers/ports.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const run = promisify(execFile);
const dirnameOf = (path: string) => posix.dirname(path);

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
      // What the README links and tells an operator to run.
      'package/CHANGELOG.md',
      'package/SECURITY.md',
      'package/deploy/prometheus/tests/exporter.test.yml',
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
    // Of tests, only the rules' unit tests for promtool, which operators run on the rules they deploy.
    expect(entries.filter((e) => !e.startsWith('package/deploy/prometheus/tests/') && /(^|\/)(test|tests|bench|src)\/|\.(test|spec)\.[a-z]+$/.test(e))).toEqual([]);
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

  describe('the installed copy is the documented copy (issue 45)', () => {
    let pkg: string;
    beforeAll(async () => {
      pkg = join(dir, 'unpacked');
      mkdirSync(pkg, { recursive: true });
      await run('tar', ['-xzf', tgz, '-C', pkg, '--strip-components=1']);
    });

    it('the shipped README and docs are the checked ones, and every relative link in them resolves inside the tarball', () => {
      const docs = readdirSync(join(pkg, 'docs')).filter((f) => f.endsWith('.md'));
      for (const f of ['README.md', 'CHANGELOG.md', 'SECURITY.md', ...docs.map((d) => `docs/${d}`)]) {
        // docs-drift.test.ts holds the clone's copies to the code: the shipped ones are those, byte for byte.
        expect(readFileSync(join(pkg, f), 'utf8'), f).toBe(readFileSync(join(ROOT, f), 'utf8'));
      }
      const { links, broken } = brokenLinks(pkg, ['README.md', 'CHANGELOG.md', 'SECURITY.md', ...docs.map((d) => `docs/${d}`)].map((f) => join(pkg, f)));
      expect(links).toBeGreaterThan(50);
      expect(broken).toEqual([]);
    });

    it('every file the README names for a command or a setting is in the tarball, unless the README says it is in a clone', () => {
      const readme = readFileSync(join(pkg, 'README.md'), 'utf8');
      const missing: string[] = [];
      let named = 0;
      // Paragraphs (and list items) that say they are for a clone of the source repository name its files.
      for (const paragraph of readme.split(/\n(?=\s*\n|- |\s*```)/)) {
        if (/in a clone|from a clone|source repository/i.test(paragraph)) continue;
        for (const m of paragraph.matchAll(/(?<![\w./-])((?:deploy|dashboards|docs)\/[\w./*-]+[\w*])/g)) {
          named++;
          const path = m[1]!;
          const found = path.includes('*') ? existsSync(join(pkg, dirnameOf(path))) && readdirSync(join(pkg, dirnameOf(path))).some((f) => new RegExp(`^${path.split('/').pop()!.replace(/[.]/g, '\\.').replace(/\*/g, '.*')}$`).test(f)) : existsSync(join(pkg, path));
          if (!found) missing.push(path);
        }
      }
      expect(named).toBeGreaterThan(10);
      expect([...new Set(missing)]).toEqual([]);
    });

    it.skipIf(missingTool('promtool', promtoolPath(), "the README's promtool commands from the tarball"))("the README's `promtool check rules` and `promtool test rules` run as written in the unpacked tarball", async () => {
      const readme = readFileSync(join(pkg, 'README.md'), 'utf8');
      const commands = [...readme.matchAll(/`(promtool (?:check|test) rules [^`]+)`/g)].map((m) => m[1]!);
      expect(commands).toHaveLength(2);
      for (const command of commands) {
        const [, ...args] = command.split(' ');
        const files = args.flatMap((a) => (a.includes('*') ? readdirSync(join(pkg, dirnameOf(a))).filter((f) => f.endsWith('.yml')).map((f) => `${dirnameOf(a)}/${f}`) : [a]));
        const { stdout } = await run(promtoolPath()!, files, { cwd: pkg });
        expect(stdout, command).toMatch(/SUCCESS/);
      }
    });
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

    // The installed demo prints commands for the installed CLI, and its doctor command runs as printed (issue 45: it
    // said `node dist/cli.js doctor`, which exists only in a clone).
    const demo = spawn(bin, ['demo'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let said = '';
    demo.stdout.on('data', (d: Buffer) => (said += d.toString()));
    demo.stderr.on('data', (d: Buffer) => (said += d.toString()));
    const demoExited = new Promise((resolve) => demo.on('exit', resolve));
    try {
      const line = await waitFor(`the demo's doctor command (output so far: ${said.slice(-1000)})`, () => said.split('\n').find((l) => /^\s+\S+ doctor /.test(l)), 60_000);
      const m = /^\s+(wowza-exporter doctor .*?)\s+\(with WOWZA_PASSWORD=(\S+)\)$/.exec(line);
      expect(m, line).not.toBeNull();
      const [cmd, ...args] = m![1]!.split(/\s+/);
      expect(cmd).toBe('wowza-exporter');
      const doctor = await run(join(prefix, 'bin', cmd!), args, { cwd: dir, env: { ...env, WOWZA_PASSWORD: m![2]! }, timeout: 60_000 }).then(
        (r) => ({ code: 0, out: r.stdout + r.stderr }),
        (e: { code?: number; stdout?: string; stderr?: string }) => ({ code: e.code, out: `${e.stdout ?? ''}${e.stderr ?? ''}` }),
      );
      // It runs and reaches the demo's server with the printed credentials; the one failure it may report is the fault
      // the demo injects into the machine endpoint for the first 20 s of every minute.
      expect(doctor.out).toMatch(/✔ auth: Basic accepted for user "admin"/);
      const failures = doctor.out.split('\n').filter((l) => l.includes('✖'));
      expect(failures.filter((l) => !l.includes('Demo fault')), doctor.out).toEqual([]);
      expect(doctor.code, doctor.out).toBe(failures.length === 0 ? 0 : 1);
    } finally {
      demo.kill('SIGTERM');
      await demoExited;
    }
  });

  it("the README's two commands run as written in the unpacked tarball: `npm ci && npm test`, and `npm ci && npm run demo` starts the demo", async (ctx) => {
    const unpacked = join(dir, 'readme-commands');
    mkdirSync(unpacked, { recursive: true });
    await run('tar', ['-xzf', tgz, '-C', unpacked, '--strip-components=1']);
    // `npm ci` needs a lock: the tarball ships npm-shrinkwrap.json for it.
    await install(['ci'], unpacked, () => ctx.skip());
    const tested = await npm(['test'], unpacked);
    expect(tested.ok, tested.output).toBe(true);
    expect(tested.output).toMatch(new RegExp(`wowza-exporter, version ${VERSION.replaceAll('.', '\\.')} `));
    expect(tested.output).toMatch(/valid/);

    const demo = spawn('npm', ['run', 'demo'], { cwd: unpacked, env: npmEnv(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let said = '';
    demo.stdout.on('data', (d: Buffer) => (said += d.toString()));
    demo.stderr.on('data', (d: Buffer) => (said += d.toString()));
    const exited = new Promise((resolve) => demo.on('exit', resolve));
    try {
      // The demo prints where to look once its exporter listens.
      await waitFor(`the demo's status page (output so far: ${said.slice(-1000)})`, () => {
        if (demo.exitCode !== null) throw new Error(`npm run demo exited with ${demo.exitCode}: ${said.slice(-2000)}`);
        return /http:\/\/127\.0\.0\.1:\d+\//.test(said) ? true : undefined;
      }, 90_000);
      expect(said).not.toMatch(/No workspaces found|npm run build/);
    } finally {
      // npm and the demo under it: the whole group.
      try {
        process.kill(-demo.pid!, 'SIGTERM');
      } catch {
        // already gone
      }
      await exited;
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
