import type { RuntimeConfig } from '../config/load.js';
import { registerSecret } from '../base/secret-scrubber.js';

/**
 * Registers every secret a loaded configuration holds (WSE and probe module passwords, the Video token, the webhook
 * secret) for the process's scrubbing of what servers and receivers answer (secret-scrubber.ts). The log sinks
 * register theirs when they are built. Called after each load: a reload may bring new ones.
 */
export function registerConfiguredSecrets(runtime: RuntimeConfig): void {
  for (const t of [...runtime.servers, ...runtime.logServers]) registerSecret(t.password, t.username);
  for (const m of runtime.modules.values()) registerSecret(m.password, m.config.username);
  registerSecret(runtime.videoToken);
  registerSecret(runtime.webhookSecret);
}
