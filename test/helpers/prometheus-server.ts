import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { freePort, waitFor } from './ports.js';

export interface PrometheusServer {
  url: string;
  /** The active targets with the labels relabelling gave them. */
  targets(): Promise<Array<{ labels: Record<string, string>; scrapePool: string }>>;
  /** Instant query; returns the result vector. */
  query(expr: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>>;
  /** Waits until `expr` returns at least one sample (and `accept` likes the result). */
  waitForQuery(expr: string, accept?: (r: Array<{ metric: Record<string, string>; value: [number, string] }>) => boolean, timeoutMs?: number): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>>;
  stop(): Promise<void>;
}

/** Starts a real Prometheus scraping `targets` every second, with optional rule files. */
export async function startPrometheus(
  binary: string,
  opts: { targets: string[]; job?: string; ruleFiles?: string[]; scrapeInterval?: string; extraScrapeConfigs?: object[] },
): Promise<PrometheusServer> {
  const dir = mkdtempSync(join(tmpdir(), 'wowza-prom-'));
  const port = await freePort();
  const config = {
    global: { scrape_interval: opts.scrapeInterval ?? '1s', evaluation_interval: opts.scrapeInterval ?? '1s' },
    rule_files: opts.ruleFiles ?? [],
    scrape_configs: [{ job_name: opts.job ?? 'wowza', static_configs: [{ targets: opts.targets }] }, ...(opts.extraScrapeConfigs ?? [])],
  };
  writeFileSync(join(dir, 'prometheus.yml'), stringify(config));
  const proc: ChildProcess = spawn(
    binary,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`prometheus ready (${stderr.slice(-300)})`, async () => {
    if (proc.exitCode !== null) throw new Error(`prometheus exited: ${stderr.slice(-1000)}`);
    return (await fetch(`${url}/-/ready`)).status === 200 ? true : undefined;
  }, 30_000);

  const query: PrometheusServer['query'] = async (expr) => {
    const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await res.json()) as { status: string; error?: string; data?: { resultType: string; result: unknown } };
    if (body.status !== 'success') throw new Error(`query ${expr} failed: ${body.error}`);
    if (body.data!.resultType === 'scalar') return [{ metric: {}, value: body.data!.result as [number, string] }];
    return body.data!.result as Array<{ metric: Record<string, string>; value: [number, string] }>;
  };
  return {
    url,
    query,
    async targets() {
      const body = (await (await fetch(`${url}/api/v1/targets?state=active`)).json()) as { data: { activeTargets: Array<{ labels: Record<string, string>; scrapePool: string }> } };
      return body.data.activeTargets;
    },
    waitForQuery: (expr, accept = (r) => r.length > 0, timeoutMs = 45_000) =>
      waitFor(`query ${expr}`, async () => {
        const r = await query(expr);
        return accept(r) ? r : undefined;
      }, timeoutMs, 250),
    async stop() {
      if (proc.exitCode === null) {
        proc.kill('SIGTERM');
        await new Promise((r) => proc.once('exit', r));
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
