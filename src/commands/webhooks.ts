import type { CommandModule } from 'yargs';
import { ConfigError } from '../config/errors.js';
import { loadConfig } from '../config/load.js';
import { readSecretFile } from '../config/secrets.js';
import { escapeControlCharacters as shown, escapeControlCharactersButNewlines, stringifyJsonSafely } from '../base/control-characters.js';
import { createLogger } from '../base/logger.js';
import { registerSecret } from '../base/secret-scrubber.js';
import { WowzaClient } from '../wowza/client.js';
import { DEFAULT_CRITERIA, setupWebhooks, webhookStatus, type DeliveryAuth } from '../webhooks/setup.js';
import { registerConfiguredSecrets } from './configured-secrets.js';
import { configFlagsFrom, withWowzaFlags } from './flags.js';

const MARK = { create: '+', update: '~', unchanged: '=' } as const;

/**
 * The receiver URL for one server, with `?server=<name>` so the exporter labels its events right (a real
 * server's event `source` is its GUID, not the name configured here).
 */
export function targetUrlFor(base: string, server: string): string {
  let u: URL;
  try {
    u = new URL(base);
  } catch {
    throw new ConfigError(`--target-url: not a URL: ${JSON.stringify(base.slice(0, 200))}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ConfigError('--target-url must be an http or https URL');
  // Each server's target carries its own name; one given in the URL would be replaced for every server but one.
  if (u.searchParams.has('server')) throw new ConfigError(`--target-url: leave out "server=": each server's target gets ?server=<its name> (here ${JSON.stringify(server)})`);
  u.searchParams.set('server', server);
  return u.toString();
}

/** Runs `fn` against every configured server; a failure is printed and makes the exit code 1. */
async function forEachServer(argv: Record<string, unknown>, fn: (client: WowzaClient, name: string) => Promise<void>): Promise<void> {
  const warn = createLogger({ level: 'warn' });
  const runtime = loadConfig(configFlagsFrom(argv), process.env, (m, meta) => warn.warn(meta, m));
  registerConfiguredSecrets(runtime);
  let failed = false;
  for (const target of runtime.servers) {
    const client = new WowzaClient(target);
    try {
      await fn(client, target.name);
    } catch (err) {
      failed = true;
      process.stderr.write(`${target.name}: ${escapeControlCharactersButNewlines((err as Error).message)}\n`);
    } finally {
      await client.close();
    }
  }
  process.exitCode = failed ? 1 : 0;
}

const setup: CommandModule = {
  command: 'setup',
  describe: 'make the server deliver webhooks to this exporter (idempotent; prints what it changes)',
  builder: (y) =>
    withWowzaFlags(y)
      .option('target-url', { type: 'string', demandOption: true, describe: 'where Wowza delivers events, e.g. http://exporter:9935/webhooks/wowza' })
      .option('criteria', { type: 'string', default: DEFAULT_CRITERIA, describe: 'event filter criteria: dot-separated tokens, * one token, > the rest' })
      .option('secret-file', { type: 'string', demandOption: true, describe: 'file with the secret shared with the receiver (webhooks.secret_file)' })
      .option('auth', {
        choices: ['jwt', 'header'],
        default: 'jwt',
        describe: 'jwt: the target signs each delivery (HS256 Bearer); header: the secret goes as a static Authorization header',
      })
      .option('id', { type: 'string', default: 'wowza-exporter', describe: 'id of the target and filter this tool manages' })
      .option('max-retry-attempts', { type: 'number', default: 3 })
      .option('retry-delay-ms', { type: 'number', default: 1000 })
      .option('dry-run', { type: 'boolean', default: false, describe: 'show the changes without making them' })
      .usage('Usage: $0 webhooks setup --target-url <url> --secret-file <file> [options]\n\nMake the server deliver webhooks to this exporter (idempotent; prints what it changes).')
      .example('$0 webhooks setup --wowza.url http://wowza:8087 --target-url http://exporter:9935/webhooks/wowza --secret-file /etc/wowza-exporter/secrets/webhook-secret --dry-run', 'show what it would change on one server'),
  handler: async (argv) => {
    targetUrlFor(String(argv['target-url']), 'check'); // a usage error exits 2 before any server is asked
    const secret = readSecretFile(String(argv['secret-file']), '--secret-file', (m) => process.stderr.write(`warning: ${m}\n`));
    // Sent to the servers, which may quote it back in an error.
    registerSecret(secret);
    await forEachServer(argv, async (client, name) => {
        const changes = await setupWebhooks(client, {
          targetUrl: targetUrlFor(String(argv['target-url']), name),
          criteria: String(argv.criteria),
          secret,
          auth: argv.auth as DeliveryAuth,
          id: String(argv.id),
          maxRetryAttempts: Number(argv['max-retry-attempts']),
          retryDelayMs: Number(argv['retry-delay-ms']),
          dryRun: argv['dry-run'] === true,
        });
        process.stdout.write(`${name}:${argv['dry-run'] ? ' (dry run)' : ''}\n`);
        // What the server holds is shown with its control characters escaped, never acted on by the terminal.
        for (const c of changes) process.stdout.write(`${MARK[c.kind]} ${shown(c.what)}${c.kind === 'unchanged' ? ' (unchanged)' : ''}\n${c.diff.map((d) => `${shown(d)}\n`).join('')}`);
        if (changes.every((c) => c.kind === 'unchanged')) process.stdout.write('  nothing to change\n');
    });
  },
};

const status: CommandModule = {
  command: 'status',
  describe: 'show webhook targets, filters and whether the server listener is installed',
  builder: (y) =>
    withWowzaFlags(y)
      .option('json', { type: 'boolean', default: false, describe: 'print JSON instead of text' })
      .usage('Usage: $0 webhooks status [options]\n\nShow webhook targets, filters and whether the server listener is installed.')
      .example('$0 webhooks status --config /etc/wowza-exporter/config.yaml', 'every configured server'),
  handler: async (argv) => {
    await forEachServer(argv, async (client, name) => {
        const s = await webhookStatus(client);
        if (argv.json) {
          process.stdout.write(stringifyJsonSafely({ server: name, ...s }, 2) + '\n');
          return;
        }
        process.stdout.write(`${name}:\n  listener ${s.listener ? 'installed' : 'MISSING (events are not delivered)'}\n`);
        for (const t of s.targets) {
          const header = t.headers?.some((h) => h.name.toLowerCase() === 'authorization');
          process.stdout.write(`  target ${shown(String(t.id))}: ${shown(t.url ?? '-')} auth=${shown(t.auth?.type ?? (header ? 'header' : 'none'))}\n`);
        }
        for (const f of s.filters) process.stdout.write(`  filter ${shown(String(f.id))}: ${f.enabled ? 'enabled' : 'disabled'} ${shown(f.criteria ?? '')} -> ${shown(f.targetRef ?? '-')}\n`);
        if (s.targets.length === 0 && s.filters.length === 0) process.stdout.write('  no targets or filters\n');
    });
  },
};

export const webhooksCommand: CommandModule = {
  command: 'webhooks <command>',
  describe: 'configure and inspect WSE webhook delivery (4.9.6+)',
  builder: (y) =>
    y
      .command(setup)
      .command(status)
      .demandCommand(1)
      .usage('Usage: $0 webhooks <command> [options]\n\nConfigure and inspect WSE webhook delivery (4.9.6+).')
      .example('$0 webhooks status --wowza.url http://wowza:8087', 'what the server delivers, and where'),
  handler: () => {},
};
