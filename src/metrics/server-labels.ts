import type { Registry } from 'prom-client';
import { escapeLabel } from './exposition.js';

/**
 * A server's own labels (from its target file) on the exporter's own series of that server: every sample line
 * with `server="<name>"` gets them. The Wowza series get them when their sets are rendered; these lines are few
 * and rendered per scrape, so they are rewritten per scrape.
 */
export function addServerLabels(text: string, labelsByServer: ReadonlyMap<string, string>): string {
  if (labelsByServer.size === 0) return text;
  return text
    .split('\n')
    .map((line) => (line.startsWith('#') ? line : withLabels(line, labelsByServer)))
    .join('\n');
}

/** The exporter's own series, with each server's labels, ending in a newline unless empty. */
export async function renderSelfMetrics(registry: Registry, labelsByServer: ReadonlyMap<string, string>): Promise<string> {
  const own = addServerLabels(await registry.metrics(), labelsByServer);
  return own.endsWith('\n') || own === '' ? own : own + '\n';
}

/** The line with the server's labels added at the end of its label set (values may hold `}` and `,`). */
function withLabels(line: string, labelsByServer: ReadonlyMap<string, string>): string {
  const open = line.indexOf('{');
  if (open < 0) return line;
  let server: string | undefined;
  let i = open + 1;
  while (i < line.length && line[i] !== '}') {
    const eq = line.indexOf('="', i);
    if (eq < 0) return line;
    const name = line.slice(i, eq);
    let j = eq + 2;
    let value = '';
    for (; j < line.length && line[j] !== '"'; j++) {
      if (line[j] === '\\') {
        j++;
        value += line[j] === 'n' ? '\n' : line[j];
      } else value += line[j];
    }
    if (name === 'server') server = value;
    i = j + 1;
    if (line[i] === ',') i++;
  }
  const extra = server === undefined ? undefined : labelsByServer.get(server);
  return extra ? `${line.slice(0, i)},${extra}${line.slice(i)}` : line;
}

/** `k="v",...` of a server's labels, escaped, in the order given. */
export function formatServerLabels(labels: Readonly<Record<string, string>>): string {
  return Object.entries(labels)
    .map(([k, v]) => `${k}="${escapeLabel(v)}"`)
    .join(',');
}
