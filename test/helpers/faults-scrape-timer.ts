import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';

/**
 * Times GET /metrics from a process of its own. The test process also runs the simulator, whose work
 * (hundreds of answers a second in a topology spike) would otherwise be counted as the exporter's
 * latency; a plain `node:http` keep-alive client keeps the client's own cost out of the numbers too.
 */

const CHILD = `
import http from 'node:http';
import { createInterface } from 'node:readline';
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const once = (url) => new Promise((resolve, reject) => {
  const started = performance.now();
  http.get(url, { agent }, (res) => {
    res.on('data', () => {});
    res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error('status ' + res.statusCode))));
    res.on('error', reject);
  }).on('error', reject);
});
for await (const line of createInterface({ input: process.stdin })) {
  const { url, count, gapMs } = JSON.parse(line);
  const times = [];
  try {
    for (let i = 0; i < count; i++) {
      times.push(await once(url));
      await new Promise((r) => setTimeout(r, gapMs));
    }
    process.stdout.write(JSON.stringify({ times }) + '\\n');
  } catch (err) {
    process.stdout.write(JSON.stringify({ error: String(err.message ?? err) }) + '\\n');
  }
}
`;

export interface ScrapeTimer {
  /** Scrapes `count` times, `gapMs` apart; resolves with each scrape's milliseconds (request to end of body). */
  time(count: number, gapMs: number): Promise<number[]>;
  close(): Promise<void>;
}

export async function startScrapeTimer(metricsUrl: string): Promise<ScrapeTimer> {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ['--input-type=module', '-e', CHILD], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  let queue = Promise.resolve();

  const ask = async (count: number, gapMs: number): Promise<number[]> => {
    child.stdin.write(JSON.stringify({ url: metricsUrl, count, gapMs }) + '\n');
    const next = await lines.next();
    if (next.done) throw new Error(`scrape timer exited: ${stderr.slice(-500)}`);
    const answer = JSON.parse(next.value) as { times?: number[]; error?: string };
    if (!answer.times) throw new Error(`scrape timer: ${answer.error}`);
    return answer.times;
  };
  // Warm the child (module load, JIT, connection) so the first measured scrape is not its start-up.
  await ask(2, 0);

  return {
    time(count, gapMs) {
      const result = queue.then(() => ask(count, gapMs));
      queue = result.then(
        () => undefined,
        () => undefined,
      );
      return result;
    },
    async close() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.stdin.end();
      await exited;
    },
  };
}
