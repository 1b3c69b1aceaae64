import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isCollection, isPair, isScalar, parse, parseDocument, visit, type Pair } from 'yaml';
import { checkConfig, parseConfig, resolveConfig } from '../../src/config/load.js';
import { ConfigProblems } from '../../src/config/problems.js';

const EXAMPLE = new URL('../../deploy/config.example.yaml', import.meta.url);
const text = readFileSync(EXAMPLE, 'utf8');

/** What the exporter makes of a document: the config, with the collectors as resolved (an omitted `true` is the same). */
function effective(doc: Record<string, unknown>) {
  const config = parseConfig(doc);
  // The example's secret files do not exist here: gathered, not thrown, so the rest of the document still resolves.
  const runtime = resolveConfig(config, {}, () => {}, new ConfigProblems());
  return { ...config, collectors: runtime.collectors };
}

describe('deploy/config.example.yaml', () => {
  it('is a valid configuration: every documented key is accepted', () => {
    const doc = parse(text) as Record<string, unknown>;
    const config = parseConfig(doc);
    expect(config.servers![0]!.name).toBe('wse-1');
    expect(config.collectors.stream).toEqual({ enabled: true, interval: 30_000 });
  });

  it('with --config.check, reports only the secret file a user must create: the Wowza password (the webhook receiver is off)', () => {
    const { problems } = checkConfig({ config: EXAMPLE.pathname }, {});
    expect(problems).toEqual([
      'servers[0].password_file: cannot read /etc/wowza-exporter/secrets/password (ENOENT)',
      'modules.default.password_file: cannot read /etc/wowza-exporter/secrets/password (ENOENT)',
    ]);
  });

  it('says it tells examples from defaults, and every value not marked [example] is the default', () => {
    expect(text).toMatch(/^# - A value whose comment starts with \[example\] is an example/m);
    const baseline = effective(parse(text) as Record<string, unknown>);
    const lineOf = (offset: number) => text.slice(text.lastIndexOf('\n', offset - 1) + 1, text.indexOf('\n', offset));
    const checked: string[] = [];
    const source = parseDocument(text);
    visit(source, {
      Pair(_, pair: Pair) {
        // A leaf: a scalar or a flow collection such as {} or [access, error]; block collections hold their own leaves.
        const value = pair.value;
        const leaf = isScalar(value) || (isCollection(value) && value.flow === true);
        if (!leaf || !isScalar(pair.key)) return leaf ? visit.SKIP : undefined;
        const key = String(pair.key.value);
        // A sink's type says which sink it is: it has no default to compare with.
        if (key === 'type' || lineOf(pair.key.range![0]).includes('# [example]')) return visit.SKIP;
        const dotted = pathOf(source, pair);
        const without = parseDocument(text);
        without.deleteIn(dotted);
        expect(effective(without.toJS() as Record<string, unknown>), `${dotted.join('.')} (${lineOf(pair.key.range![0]).trim()}) is not marked [example] but is not the default`).toEqual(baseline);
        checked.push(dotted.join('.'));
        return visit.SKIP;
      },
    });
    // The check reached the sections it is about, not an empty walk.
    expect(checked).toEqual(expect.arrayContaining(['servers.0.auth', 'poll.interval', 'collectors.stream_target', 'logs.time_zone', 'logs.sinks.1.max_bytes', 'webhooks.dedupe_window']));
  });
});

/** The path of `target` in `doc`, as `deleteIn` takes it: keys, and indexes in sequences. */
function pathOf(doc: ReturnType<typeof parseDocument>, target: Pair): unknown[] {
  let found: unknown[] | undefined;
  const walk = (node: unknown, at: unknown[]): void => {
    if (found || !isCollection(node)) return;
    node.items.forEach((item, i) => {
      if (found) return;
      if (isPair(item)) {
        const key = isScalar(item.key) ? item.key.value : item.key;
        if (item === target) found = [...at, key];
        else walk(item.value, [...at, key]);
      } else walk(item, [...at, i]);
    });
  };
  walk(doc.contents, []);
  return found!;
}
