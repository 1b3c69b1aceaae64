import type { CommandModule } from 'yargs';
import { wseCollectorsEnabled } from '../collectors/registry.js';
import { loadConfig } from '../config/load.js';
import { stringifyJsonSafely } from '../base/control-characters.js';
import { runDoctor } from '../doctor/checks.js';
import { formatResult, type CheckResult } from '../doctor/report.js';
import { createLogger, silentLogger } from '../base/logger.js';
import { registerConfiguredSecrets } from './configured-secrets.js';
import { configFlagsFrom, withPollFlags, withWowzaFlags } from './flags.js';

export const doctorCommand: CommandModule = {
  command: 'doctor',
  describe: 'diagnose the connection to each configured server and the cost of polling it',
  // The connection, and the polling whose cost it estimates: no web, log, shard or Wowza Video flags, which it would ignore.
  builder: (y) =>
    withPollFlags(withWowzaFlags(y))
      .option('json', { type: 'boolean', default: false, describe: 'print the results as JSON' })
      .usage('Usage: $0 doctor [options]\n\nDiagnose the connection to each configured server and the cost of polling it; exit 0 when every check passes, 1 otherwise.')
      .example('WOWZA_PASSWORD=secret $0 doctor --wowza.url http://wowza:8087 --wowza.username admin', 'check one server')
      .example('$0 doctor --config /etc/wowza-exporter/config.yaml --json', 'check every server of a config, as JSON'),
  handler: async (argv) => {
    const flags = configFlagsFrom(argv);
    const warnLog = createLogger({ level: 'warn' });
    const runtime = loadConfig(flags, process.env, (msg, meta) => warnLog.warn(meta, msg));
    registerConfiguredSecrets(runtime);
    const collectors = wseCollectorsEnabled(runtime.collectors);
    const json = argv.json === true;
    const all: Array<{ server: string; url: string; results: CheckResult[] }> = [];
    for (const target of runtime.servers) {
      if (!json) process.stdout.write(`${target.name} (${target.url})\n`);
      const results = await runDoctor({
        target,
        config: runtime.config,
        collectors,
        intervalMs: runtime.config.poll.interval,
        logger: silentLogger(),
        emit: json ? undefined : (r) => process.stdout.write(`  ${formatResult(r).replace(/\n/g, '\n  ')}\n`),
      });
      all.push({ server: target.name, url: target.url, results });
    }
    const ok = all.every((s) => s.results.every((r) => r.status !== 'fail'));
    if (json) process.stdout.write(stringifyJsonSafely({ ok, servers: all }, 2) + '\n');
    else process.stdout.write(ok ? 'all checks passed\n' : 'some checks failed\n');
    process.exitCode = ok ? 0 : 1;
  },
};
