#!/usr/bin/env node
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { demoCommand } from './commands/demo.js';
import { doctorCommand } from './commands/doctor.js';
import { logsCommand } from './commands/logs.js';
import { schedulesCommand } from './commands/schedules.js';
import { serveCommand } from './commands/serve.js';
import { simulateCommand } from './commands/simulate.js';
import { webhooksCommand } from './commands/webhooks.js';
import { ConfigError } from './config/errors.js';

// A stray rejection must not take the exporter down: log it and keep serving.
process.on('unhandledRejection', (reason) => {
  process.stderr.write(JSON.stringify({ level: 'error', msg: 'unhandled rejection', err: String((reason as Error)?.message ?? reason) }) + '\n');
});

function exitWith(code: number, message: string): never {
  process.stderr.write(`wowza-exporter: ${message}\n`);
  process.exit(code);
}

export async function main(argv: string[]): Promise<void> {
  const cli = yargs(argv)
    .scriptName('wowza-exporter')
    .parserConfiguration({ 'dot-notation': false })
    .command(serveCommand)
    .command(simulateCommand)
    .command(demoCommand)
    .command(logsCommand)
    .command(doctorCommand)
    .command(webhooksCommand)
    .command(schedulesCommand)
    .strict()
    .help()
    .alias('h', 'help')
    .version()
    .wrap(Math.min(120, process.stdout.columns || 100))
    .fail((msg, err) => {
      if (err) throw err;
      exitWith(2, `${msg}\nRun with --help for usage.`);
    });
  try {
    await cli.parseAsync();
  } catch (err) {
    if (err instanceof ConfigError) exitWith(2, err.message);
    exitWith(1, (err as Error).message);
  }
}

await main(hideBin(process.argv));
