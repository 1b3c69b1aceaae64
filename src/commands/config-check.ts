import { ConfigError } from '../config/errors.js';
import { checkConfig, type ConfigFlags } from '../config/load.js';
import { checkRegularFile, CONFIG_FILE_MAX_BYTES } from '../config/read-file.js';
import { escapeControlCharactersButNewlines } from '../base/control-characters.js';

/**
 * `--config.check`: a line per problem (each names its key and file), then a summary; 0 valid, 1 invalid, as
 * promtool's, amtool's and blackbox_exporter's checks exit.
 */
export async function reportConfigCheck(flags: ConfigFlags): Promise<number> {
  const warnings: string[] = [];
  const warn = (msg: string, meta: object) => {
    const m = meta as { field?: string; path?: string };
    warnings.push(`warning: ${m.field ? `${m.field}: ` : ''}${m.path ? `${m.path}: ` : ''}${msg}`);
  };
  const { problems, config } = checkConfig(flags, process.env, warn);
  // The web config (and the TLS files it names) is read as the exporter reads it at start.
  if (config?.web.config_file) {
    try {
      // Its reader waits on whatever it opens: a FIFO or a device given by mistake is refused before it.
      checkRegularFile(config.web.config_file, '--web.config.file', 'a web config file', CONFIG_FILE_MAX_BYTES);
      await (await import('../http/web-config.js')).loadWebConfig(config.web.config_file, warn);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(err.message);
    }
  }
  // Named as a thing that is valid: the file, or the configuration the flags make without one.
  const source = flags.config ?? 'the configuration from the flags';
  const out = [...problems, ...warnings];
  out.push(
    problems.length === 0
      ? `config.check: ${source} is valid${warnings.length ? ` (${warnings.length} warning${warnings.length === 1 ? '' : 's'})` : ''}`
      : `config.check: ${source}: ${problems.length} problem${problems.length === 1 ? '' : 's'}; the exporter would not start`,
  );
  process.stdout.write(escapeControlCharactersButNewlines(out.join('\n')) + '\n');
  return problems.length === 0 ? 0 : 1;
}
