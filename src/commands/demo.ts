import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CommandModule } from 'yargs';
import { parseConfig, resolveConfig } from '../config/load.js';
import { startExporter } from '../exporter.js';
import { createLogger } from '../logger.js';
import { onShutdown } from './lifecycle.js';
import { startSimulator } from '../simulator/index.js';

/** Simulator + exporter + log follower on loopback, for a first look without a Wowza server. */
export const demoCommand: CommandModule = {
  command: 'demo',
  describe: 'start the simulator, the exporter and the log follower on loopback and print where to look',
  builder: (y) =>
    y
      .option('web.listen-address', { type: 'string', default: '127.0.0.1:9935', describe: 'address of the exporter' })
      .option('streams', { type: 'number', default: 3, describe: 'streams per application in the simulator' })
      .option('log.level', { type: 'string', choices: ['debug', 'info', 'warn', 'error'], default: 'warn' }),
  handler: async (argv) => {
    const dir = mkdtempSync(join(tmpdir(), 'wowza-exporter-demo-'));
    const sim = await startSimulator({ port: 0, auth: 'digest', streams: Number(argv.streams), logs: { linesPerSecond: 5 } });
    const logFile = join(dir, 'wowza-logs.ndjson');
    const config = parseConfig({
      servers: [{ name: 'demo', url: sim.url, username: sim.username, auth: 'auto' }],
      web: { listen_address: String(argv['web.listen-address']) },
      poll: { interval: '5s', timeout: '2s' },
      webhooks: { enabled: true },
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
      throw err;
    }
    await exporter.scheduler.firstCycle;
    const u = exporter.url;
    process.stdout.write(
      [
        '',
        'wowza-exporter demo is running:',
        `  simulated Wowza REST API  ${sim.url}  (Digest, user ${sim.username}, password ${sim.password})`,
        `  exporter                  ${u}/`,
        `  metrics                   ${u}/metrics`,
        `  readiness                 ${u}/-/ready`,
        `  shipped log records       ${logFile}`,
        '',
        'Try:',
        `  curl -s ${u}/metrics | grep -E '^wowza_(up|machine_cpu_ratio|stream_connected)'`,
        `  tail -f ${logFile}`,
        `  curl --digest -u ${sim.username}:${sim.password} -H 'Accept: application/json' ${sim.url}/v2/machine/monitoring/current`,
        `  node dist/cli.js doctor --wowza.url ${sim.url} --wowza.username ${sim.username}   (with WOWZA_PASSWORD=${sim.password})`,
        '',
        'Press Ctrl-C to stop.',
        '',
      ].join('\n'),
    );
    onShutdown(logger, async () => {
      await exporter.close();
      await sim.close();
    });
  },
};
