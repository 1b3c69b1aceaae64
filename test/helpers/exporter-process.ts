import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { freePort, waitFor } from './ports.js';

/** The built CLI; EXPORTER_CLI runs the suite against another build (e.g. to see a new test fail on the old code). */
export const CLI = process.env.EXPORTER_CLI ?? fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

if (!existsSync(CLI)) {
  throw new Error(`${CLI} is missing: run \`npm run build\` first (npm test does it)`);
}

/**
 * Writes `dir/config.yaml` for a log-shipping run against one server (`wse-1`, basic auth): the positions and
 * dead-letter files in `dir`, then `logs`. Returns the path.
 */
export function writeLogsConfig(dir: string, server: { url: string; username: string }, logs: Record<string, unknown>): string {
  const path = join(dir, 'config.yaml');
  writeFileSync(
    path,
    stringify({
      servers: [{ name: 'wse-1', url: server.url, username: server.username, auth: 'basic' }],
      logs: { positions_file: join(dir, 'positions.json'), dead_letter_file: join(dir, 'dead-letter.ndjson'), ...logs },
    }),
  );
  return path;
}

export interface RunningExporter {
  url: string;
  port: number;
  proc: ChildProcess;
  /** Everything the process wrote so far. */
  output(): string;
  metrics(): Promise<string>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Runs `node dist/cli.js <args>` and collects its output. */
export function runCli(args: string[], opts: { env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => p.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    p.on('error', reject);
    p.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    p.stdin.end(opts.input ?? '');
  });
}

/** Starts `serve` on a free port and waits until /-/ready answers 200. */
export async function startExporterProcess(args: string[], env: NodeJS.ProcessEnv = {}, opts: { waitReady?: boolean } = {}): Promise<RunningExporter> {
  const port = await freePort();
  const proc = spawn(process.execPath, [CLI, 'serve', '--web.listen-address', `127.0.0.1:${port}`, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  await waitFor(
    `exporter on ${url} (output so far: ${out.slice(-500)})`,
    async () => {
      if (proc.exitCode !== null) throw new Error(`exporter exited with ${proc.exitCode}: ${out.slice(-2000)}`);
      const res = await fetch(`${url}${opts.waitReady === false ? '/-/healthy' : '/-/ready'}`);
      return res.status === 200 ? true : undefined;
    },
    60_000,
  );
  return {
    url,
    port,
    proc,
    output: () => out,
    // An answer that is not 200 is an error, never an empty set of metrics (waitFor retries it and says why).
    metrics: async () => {
      const res = await fetch(`${url}/metrics`);
      const text = await res.text();
      if (res.status !== 200) throw new Error(`/metrics answered ${res.status}: ${text.slice(0, 200)}`);
      return text;
    },
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (proc.exitCode !== null) return proc.exitCode;
      proc.kill(signal);
      return exited;
    },
  };
}

/** Parses exposition text into `name{labels}` -> value, for assertions. */
export function parseMetrics(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

/** Samples of one metric whose labels include all of `match`. */
export function samples(text: string, name: string, match: Record<string, string> = {}): Array<{ labels: Record<string, string>; value: number }> {
  const res: Array<{ labels: Record<string, string>; value: number }> = [];
  for (const [key, value] of parseMetrics(text)) {
    const brace = key.indexOf('{');
    const metric = brace === -1 ? key : key.slice(0, brace);
    if (metric !== name) continue;
    const labels: Record<string, string> = {};
    if (brace !== -1) {
      for (const m of key.slice(brace + 1, -1).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[m[1]!] = m[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    if (Object.entries(match).every(([k, v]) => labels[k] === v)) res.push({ labels, value });
  }
  return res;
}
