import type { CommandModule } from 'yargs';
import { versionText } from './base/build-info.js';
import { ConfigError } from './config/errors.js';
import { escapeControlCharactersButNewlines, stringifyJsonSafely } from './base/control-characters.js';
import { loadYargs } from './base/yargs-lean.js';

/** Every command, in the order help lists them, loaded on demand. */
const COMMANDS: Record<string, () => Promise<CommandModule>> = {
  serve: async () => (await import('./commands/serve.js')).serveCommand,
  simulate: async () => (await import('./commands/simulate.js')).simulateCommand,
  demo: async () => (await import('./commands/demo.js')).demoCommand,
  logs: async () => (await import('./commands/logs.js')).logsCommand,
  doctor: async () => (await import('./commands/doctor.js')).doctorCommand,
  webhooks: async () => (await import('./commands/webhooks.js')).webhooksCommand,
  schedules: async () => (await import('./commands/schedules.js')).schedulesCommand,
};

/**
 * Only the commands a command line can run are loaded, so that a long-running `serve` does not keep the simulator,
 * doctor, schedules and webhook-setup code in memory: the command named first, or `serve` (the default) when the
 * line starts with an option (a bare `--version` included), plus any command named further on (`--log.level debug
 * simulate`). Help and a mistyped name load them all, and yargs answers exactly as if all were always there.
 */
export function commandsToLoad(argv: readonly string[]): string[] {
  const first = argv[0];
  const all = Object.keys(COMMANDS);
  if (argv.some((a) => a === '--help' || a === '-h' || a === 'help')) return all;
  if (first !== undefined && Object.hasOwn(COMMANDS, first)) return [first];
  if (first === undefined || first.startsWith('-')) return ['serve', ...all.filter((name) => name !== 'serve' && argv.includes(name))];
  return all;
}

function commandsFor(argv: string[]): Promise<CommandModule[]> {
  return Promise.all(commandsToLoad(argv).map((name) => COMMANDS[name]!()));
}

// A stray rejection must not take the exporter down: log it and keep serving.
process.on('unhandledRejection', (reason) => {
  process.stderr.write(stringifyJsonSafely({ level: 'error', msg: 'unhandled rejection', err: String((reason as Error)?.message ?? reason) }) + '\n');
});

function exitWith(code: number, message: string): never {
  // A message may quote what a server answered: its control characters are shown, not acted on.
  process.stderr.write(`wowza-exporter: ${escapeControlCharactersButNewlines(message)}\n`);
  process.exit(code);
}

export async function main(argv: string[]): Promise<void> {
  const yargs = await loadYargs();
  const cli = yargs(argv)
    .scriptName('wowza-exporter')
    // The usage line of the bare command; each command's builder sets its own (and its examples).
    .usage('Usage: $0 [command] [options]\n\nA Prometheus exporter and log shipper for Wowza Streaming Engine. Without a command, runs serve.')
    .parserConfiguration({ 'dot-notation': false })
    .command(await commandsFor(argv))
    .strict()
    .help()
    .alias('h', 'help')
    .version(versionText())
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

/** Runs the command line `argv` (without node and the script). */
export function run(): Promise<void> {
  return main(process.argv.slice(2));
}
