import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

/**
 * Issue 39: imports run one way (eslint.config.js, CONTRIBUTING.md). `npm run lint` refuses an import that runs up a
 * layer or sideways into a folder beside it; these cases hold the rule to that, and the last one runs it over src/
 * so `npm test` fails too when the tree breaks it.
 */
const cwd = fileURLToPath(new URL('../..', import.meta.url));
const eslint = new ESLint({ cwd });

async function verdict(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${cwd}${file}` });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('layers', () => {
  it('refuses an import that runs up a layer', async () => {
    const [message] = await verdict('src/wowza/layer-probe.ts', "export { startExporter } from '../exporter/exporter.js';\n");
    expect(message).toMatch(/imports run one way: wowza may import only its own folder and the layers below it/);
    expect(await verdict('src/config/layer-probe.ts', "export type { Collector } from '../collectors/collector.js';\n")).toHaveLength(1);
    expect(await verdict('src/logs/sinks/layer-probe.ts', "export { buildRoutes } from '../../exporter/routes.js';\n")).toHaveLength(1);
    expect(await verdict('src/polling/layer-probe.ts', "export { LogHost } from '../exporter/log-host.js';\n")).toHaveLength(1);
    expect(await verdict('src/webhooks/layer-probe.ts', "export { serveCommand } from '../commands/serve.js';\n")).toHaveLength(1);
  });

  it('refuses an import into a folder beside it, and a base module that reaches into a folder', async () => {
    expect(await verdict('src/metrics/layer-probe.ts', "export type { WowzaTarget } from '../wowza/client.js';\n")).toHaveLength(1);
    expect(await verdict('src/http/layer-probe.ts', "export { StatusFacts } from '../status/status-api.js';\n")).toHaveLength(1);
    expect(await verdict('src/base/layer-probe.ts', "export { loadConfig } from '../config/load.js';\n")).toHaveLength(1);
    expect(await verdict('src/base/layer-probe.ts', "export { WowzaClient } from '../wowza/client.js';\n")).toHaveLength(1);
    expect(await verdict('src/exporter/exporter.ts', "export { main } from '../cli-main.js';\n")).toHaveLength(1);
  });

  it('takes an import of its own folder or of a layer below', async () => {
    expect(await verdict('src/wowza/layer-probe.ts', "export { redactUrl } from '../base/redact.js';\nexport { WowzaClient } from './client.js';\n")).toEqual([]);
    expect(await verdict('src/base/layer-probe.ts', "export { sleep } from './abortable-sleep.js';\n")).toEqual([]);
    expect(await verdict('src/logs/sinks/layer-probe.ts', "export { LogsConfigSchema } from '../../config/logs.js';\nexport { PositionStore } from '../acks/positions.js';\n")).toEqual([]);
    expect(await verdict('src/exporter/layer-probe.ts', "export { Scheduler } from '../polling/scheduler.js';\nexport { createWebhookReceiver } from '../webhooks/receiver.js';\n")).toEqual([]);
    expect(await verdict('src/commands/layer-probe.ts', "export { startExporter } from '../exporter/exporter.js';\n")).toEqual([]);
  });

  it('src/ holds folders and the two command entry points only: the base layer is a folder of its own (issue 46)', () => {
    const atRoot = readdirSync(join(cwd, 'src'), { withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name);
    expect(atRoot.sort()).toEqual(['cli-main.ts', 'cli.ts']);
  });

  it('src/ keeps to the layers, and no function in it runs past 150 lines', async () => {
    const results = await eslint.lintFiles(['src']);
    const broken = results.flatMap((r) =>
      r.messages.filter((m) => m.ruleId === 'no-restricted-imports' || m.ruleId === 'max-lines-per-function').map((m) => `${r.filePath.slice(cwd.length)}:${m.line} ${m.message}`),
    );
    expect(broken).toEqual([]);
  });
});
