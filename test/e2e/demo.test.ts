import { execSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLI } from '../helpers/exporter-process.js';
import { waitFor } from '../helpers/ports.js';

function hasCurl(): boolean {
  try {
    execSync('curl --version', { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('demo', () => {
  it('starts simulator, exporter and log follower, prints where to look, and stops cleanly on Ctrl-C', async () => {
    const proc = spawn(process.execPath, [CLI, 'demo', '--web.listen-address', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => proc.on('exit', (code) => r(code)));
    try {
      await waitFor(`the demo banner (${out.slice(-400)})`, () => (out.includes('Press Ctrl-C to stop.') ? true : undefined), 60_000);
      const metricsUrl = /metrics\s+(http:\/\/\S+\/metrics)/.exec(out)![1]!;
      const logFile = /shipped log records\s+(\S+)/.exec(out)![1]!;
      const statusUrl = /status as JSON\s+(http:\/\/\S+)/.exec(out)![1]!;
      expect(out).toMatch(/status page\s+http:\/\/\S+\/ /);
      // The demo's injected fault: the machine collector fails for a while, the others stay up.
      const failing = await waitFor('the demo fault on the status page', async () => {
        const s = (await (await fetch(statusUrl)).json()) as { servers: Array<{ collectors: Array<{ name: string; success: boolean | null; error: string | null }> }> };
        const cs = s.servers[0]!.collectors;
        return cs.find((c) => c.name === 'machine')?.success === false ? cs : undefined;
      }, 15_000);
      expect(failing.find((c) => c.name === 'machine')!.error).toMatch(/HTTP 500: Demo fault/);
      expect(failing.find((c) => c.name === 'status')!.success).toBe(true);
      const text = await (await fetch(metricsUrl)).text();
      expect(text).toContain('wowza_up{server="demo"} 1');
      expect(text).toMatch(/^wowza_stream_connected\{/m);
      // A default install's layout: REST on Basic, the viewers from connectioncounts on Digest.
      await waitFor('the connectioncounts collector', async () => ((await (await fetch(metricsUrl)).text()).includes('wowza_exporter_collector_success{server="demo",collector="connectioncounts"} 1') ? true : undefined), 15_000);
      // The curl lines it prints work as printed.
      const curls = [...out.matchAll(/^ {2}(curl -u .*|curl --digest .*)$/gm)].map((m) => m[1]!);
      expect(curls).toHaveLength(2);
      if (hasCurl()) {
        expect(JSON.parse(execSync(`${curls[0]} -sS --noproxy '*'`).toString())).toHaveProperty('serverVersion');
        expect(execSync(`${curls[1]} -sS --noproxy '*'`).toString()).toMatch(/<WowzaStreamingEngine>[\s\S]*<Stream vhostName=/);
      }
      await waitFor('shipped log records', () => {
        try {
          const lines = readFileSync(logFile, 'utf8').trim().split('\n');
          return lines.length > 5 && JSON.parse(lines[0]!).server === 'demo' ? true : undefined;
        } catch {
          return undefined;
        }
      }, 15_000);
      // Issue 40: the churn's stream stop fires several events in one second, signed with one token (no jti); the
      // status page said "rejected: replayed: 6". Every one is taken, and nothing shows as rejected.
      type WebhookStatus = { webhooks: { events: Array<{ count: number }>; rejected: Record<string, number> } };
      const hooks = await waitFor('the churn\'s webhook events (one stream and its renditions stop after 20 s)', async () => {
        const s = ((await (await fetch(statusUrl)).json()) as WebhookStatus).webhooks;
        return s.events.reduce((n, e) => n + e.count, 0) >= 2 ? s : undefined;
      }, 90_000);
      expect(hooks.rejected).toEqual({});
      expect(out).not.toContain('webhook rejected');
    } finally {
      proc.kill('SIGINT');
    }
    expect(await exited).toBe(0);
    // Its temporary folder (the webhook secret, read positions, shipped records) is gone once it stopped.
    const tempDir = /temporary folder\s+(\S+)/.exec(out)?.[1];
    expect(tempDir, out.slice(-600)).toMatch(/wowza-exporter-demo-/);
    expect(/shipped log records\s+(\S+)/.exec(out)![1]!.startsWith(`${tempDir!}/`)).toBe(true);
    expect(existsSync(tempDir!)).toBe(false);
  });
});
