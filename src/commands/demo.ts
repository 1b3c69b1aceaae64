import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import type { CommandModule } from 'yargs';
import { parseConfig, resolveConfig } from '../config/load.js';
import { startExporter } from '../exporter/exporter.js';
import { createLogger } from '../base/logger.js';
import { setupWebhooks } from '../webhooks/setup.js';
import { WowzaClient } from '../wowza/client.js';
import { onShutdown } from './lifecycle.js';
import { targetUrlFor } from './webhooks.js';

import { startSimulator } from '@wowza-exporter/simulator';

const DEMO_VERSION = 'Wowza Streaming Engine 4.9.6 build20250601120000';
const DEMO_FAULT_ROUTE = '/v2/machine/monitoring/current';
const FAULT_MS = 20_000;

/** Simulator + exporter + log follower on loopback, for a first look without a Wowza server. */
export const demoCommand: CommandModule = {
  command: 'demo',
  describe: 'start the simulator, the exporter and the log follower on loopback and print where to look',
  builder: (y) =>
    y
      .option('web.listen-address', { type: 'string', default: '127.0.0.1:9935', describe: 'address of the exporter' })
      .option('streams', { type: 'number', default: 3, describe: 'streams per application in the simulator' })
      .option('log.level', { type: 'string', choices: ['debug', 'info', 'warn', 'error'], default: 'warn', describe: 'log level of the exporter' })
      .usage('Usage: $0 demo [options]\n\nStart the simulator, the exporter and the log follower on loopback and print where to look; Ctrl-C stops them and removes the demo\'s temporary folder.')
      .example('$0 demo', 'then open http://127.0.0.1:9935/ in a browser')
      .example('$0 demo --web.listen-address 127.0.0.1:9936 --streams 10', 'on another port, with more streams'),
  handler: async (argv) => {
    // The demo's secret, positions and shipped records: nothing in it outlives the demo.
    const dir = mkdtempSync(join(tmpdir(), 'wowza-exporter-demo-'));
    const removeDir = () => rmSync(dir, { recursive: true, force: true });
    let sim: Awaited<ReturnType<typeof startSimulator>>;
    try {
      // 4.9.6 so the simulator can deliver webhooks to the exporter's receiver. A default install's layout: REST on
      // Basic, the admin port's connectioncounts provider on Digest.
      // A password of its own, not the username: the commands printed below then show both.
      sim = await startSimulator({ port: 0, auth: 'basic', password: `demo-${randomBytes(4).toString('hex')}`, adminAuth: 'digest', streams: Number(argv.streams), serverVersion: DEMO_VERSION, logs: { linesPerSecond: 5 } });
    } catch (err) {
      removeDir();
      throw err;
    }
    const logFile = join(dir, 'wowza-logs.ndjson');
    const secretFile = join(dir, 'webhook-secret');
    const secret = randomBytes(24).toString('base64url');
    writeFileSync(secretFile, secret, { mode: 0o600 });
    const config = parseConfig({
      servers: [{ name: 'demo', url: sim.url, username: sim.username, auth: 'auto', connectioncounts_url: sim.countsUrl }],
      web: { listen_address: String(argv['web.listen-address']) },
      poll: { interval: '5s', timeout: '2s' },
      webhooks: { enabled: true, secret_file: secretFile },
      logs: {
        positions_file: join(dir, 'positions.json'),
        dead_letter_file: join(dir, 'dead-letter.ndjson'),
        follow_interval: '1s',
        start_at: 'beginning',
        sinks: [{ type: 'file', path: logFile }],
      },
      log: { level: String(argv['log.level']), format: 'logfmt' },
    });
    const runtime = resolveConfig(config, { WOWZA_PASSWORD: sim.password });
    const logger = createLogger({ level: runtime.config.log.level, format: 'logfmt' });
    let exporter;
    try {
      exporter = await startExporter(runtime, logger);
    } catch (err) {
      await sim.close();
      removeDir();
      throw err;
    }
    await exporter.scheduler.firstCycle;
    // Point the simulator's webhooks at the receiver, as `webhooks setup` would on a real server.
    const setupClient = new WowzaClient(runtime.servers[0]!);
    try {
      await setupWebhooks(setupClient, { targetUrl: targetUrlFor(`${exporter.url}${runtime.config.webhooks.path}`, 'demo'), secret });
    } finally {
      await setupClient.close();
    }
    // The status page should show both states: the machine collector fails for the first FAULT_MS of every
    // minute (an injected HTTP 500), and recovers by itself.
    let clearFault = sim.faults.inject(DEMO_FAULT_ROUTE, { type: 'status', status: 500, message: 'Demo fault: MachineMonitor unavailable (injected by the demo)' });
    const faultClearing = setTimeout(() => clearFault(), FAULT_MS);
    const faults = setInterval(() => {
      clearFault = sim.faults.inject(DEMO_FAULT_ROUTE, { type: 'status', status: 500, message: 'Demo fault: MachineMonitor unavailable (injected by the demo)' });
      setTimeout(() => clearFault(), FAULT_MS).unref();
    }, 60_000);
    faults.unref();
    faultClearing.unref();
    const u = exporter.url;
    process.stdout.write(
      [
        '',
        'wowza-exporter demo is running:',
        `  simulated Wowza REST API  ${sim.url}  (Basic, user ${sim.username}, password ${sim.password})`,
        `  its connectioncounts      ${sim.countsUrl}  (Digest, as a default install's admin port)`,
        `  status page               ${u}/   (open it in a browser: the machine collector fails for the first ${FAULT_MS / 1000} s of every minute, then recovers)`,
        `  status as JSON            ${u}/api/v1/status`,
        `  metrics                   ${u}/metrics`,
        `  readiness                 ${u}/-/ready`,
        `  shipped log records       ${logFile}`,
        `  temporary folder          ${dir}  (removed when the demo stops)`,
        '',
        'Try:',
        `  curl -s ${u}/metrics | grep -E '^wowza_(up|machine_cpu_ratio|stream_connected)'`,
        `  tail -f ${logFile}        (webhook events arrive with log_type "webhook")`,
        `  curl -u ${sim.username}:${sim.password} -H 'Accept: application/json' ${sim.url}/v2/servers/_defaultServer_/status`,
        `  curl --digest -u ${sim.username}:${sim.password} '${sim.countsUrl}?flat'`,
        `  ${cliCommand()} doctor --wowza.url ${sim.url} --wowza.username ${sim.username}   (with WOWZA_PASSWORD=${sim.password})`,
        '',
        'Press Ctrl-C to stop.',
        '',
      ].join('\n'),
    );
    // Some churn, so stream metrics move and webhook events arrive: one stream stops and comes back.
    let up = true;
    const churn = setInterval(() => {
      const vhost = '_defaultVHost_';
      if (up) sim.topology.stopStream(vhost, 'live', 'stream1');
      else sim.topology.startStream(vhost, 'live', 'stream1');
      up = !up;
    }, 20_000);
    churn.unref();
    onShutdown(logger, async () => {
      clearInterval(churn);
      clearInterval(faults);
      clearTimeout(faultClearing);
      await exporter.close();
      await sim.close();
      // After the exporter closed: its sinks and position store have written their last.
      removeDir();
    });
  },
};

/**
 * The command that runs this CLI, as the user started it: `wowza-exporter` when installed (npm's bin link), `node
 * dist/cli.js` from a clone (`npm run demo`), so the commands the demo prints work as written where it runs.
 */
function cliCommand(): string {
  const script = process.argv[1] ?? '';
  if (basename(script) !== 'cli.js') return 'wowza-exporter';
  const path = relative(process.cwd(), script);
  return `node ${path.startsWith('..') || path === '' ? script : path}`;
}

