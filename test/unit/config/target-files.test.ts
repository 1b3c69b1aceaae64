import { mkdirSync, mkdtempSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkConfig } from '../../../src/config/load.js';
import { TARGET_FILE_MAX_BYTES } from '../../../src/config/read-file.js';
import { checkTargetFile, readTargetFile } from '../../../src/config/servers-files.js';

/**
 * Issue 45: a target file's problems, every one of them, each named with its file and entry (`--config.check` shows
 * them all; serve logs them as one message), and `--config.check` reads the target files serve would read.
 */

const dir = mkdtempSync(join(tmpdir(), 'wowza-target-files-'));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text, { mode: 0o600 });
  return p;
};
const modules = new Set(['default', 'edge']);

describe('checkTargetFile', () => {
  it('names every problem of a file with the entry (1-based), its target and the field', () => {
    const p = file(
      'three.yml',
      [
        '- targets: [wowza-1:8087]',
        '  labels: {site: a}',
        '- targets: [wowza-2:8087, wowza-3:8087]',
        '  labels: {server: x}',
        '- targets: ["ftp://admin:s3cret@w:21"]',
        '  module: nope',
        '',
      ].join('\n'),
    );
    const { groups, problems } = checkTargetFile(p, modules);
    expect(groups).toEqual([]);
    expect(problems).toEqual([
      `${p}: entry 2 (url wowza-2:8087 and 1 more): [1].labels.server: "server" is a label the exporter sets itself`,
      `${p}: entry 3 (url ftp://w:21): [2].targets[0]: must be http or https, not ftp:`,
      `${p}: entry 3 (url ftp://w:21): [2].targets[0]: must not carry credentials: the module holds them`,
      `${p}: entry 3 (url ftp://w:21): [2].module: "nope" is not one of modules: (default, edge)`,
    ]);
    expect(problems.join('\n')).not.toContain('s3cret');
    // serve's reader: the same problems, as one message naming the file once.
    expect(() => readTargetFile(p, modules)).toThrow(`${p}: 4 problems: entry 2 (url wowza-2:8087 and 1 more): [1].labels.server: "server" is a label`);
  });

  it('a file that is not a list, not YAML, not a regular file or too large: one line, none of its text', () => {
    const shadow = file('shadow', 'root:$6$pepper$Zq3hashed:19000:0:99999:7:::\n');
    const sub = join(dir, 'sub');
    mkdirSync(sub);
    const big = file('big.yml', '');
    truncateSync(big, TARGET_FILE_MAX_BYTES + 1);
    const zero = join(dir, 'zero.yml');
    symlinkSync('/dev/zero', zero);
    const cases: Array<[string, string]> = [
      [shadow, `${shadow}: the file must hold a list of {targets, module, labels}`],
      [file('syntax.yml', '- targets: [w:8087\n  s3cret\n'), `${join(dir, 'syntax.yml')}: not YAML or JSON: Flow sequence in block collection must be sufficiently indented and end with a ] at line 2, column 3`],
      [big, `servers_files: ${big} is larger than 16 MiB, the limit for a target file`],
      [zero, `servers_files: ${zero} is a character device, not a regular file; give the path of a target file`],
      [sub, `servers_files: ${sub} is a directory, not a regular file; give the path of a target file`],
    ];
    for (const [path, expected] of cases) {
      expect(checkTargetFile(path, modules), path).toEqual({ groups: [], problems: [expected] });
      expect(() => readTargetFile(path, modules)).toThrow(expected);
    }
  });

  it('a valid file gives its groups and no problem', () => {
    const p = file('ok.yml', '- targets: [wowza-1:8087]\n  module: edge\n');
    expect(checkTargetFile(p, modules)).toEqual({ groups: [{ file: p, targets: ['http://wowza-1:8087'], module: 'edge', labels: {} }], problems: [] });
  });
});

describe('checkConfig reads the target files servers_files matches', () => {
  it('every problem of every file, with the config\'s own; a valid set is no problem', () => {
    const targets = join(dir, 'targets');
    mkdirSync(targets);
    writeFileSync(join(targets, 'a.yml'), '- targets: [wowza-1:8087]\n- targets: ["ftp://w:21"]\n  labels: {server: x}\n');
    writeFileSync(join(targets, 'b.yml'), '- targets: [w:8087\n');
    writeFileSync(join(targets, 'notes.txt'), 'not matched\n');
    const config = file('fleet.yaml', `servers_files: [${join(targets, '*.yml')}]\nmodules:\n  default: {username: u}\n`);
    const { problems } = checkConfig({ config }, { WOWZA_PASSWORD: 'x' });
    expect(problems).toEqual([
      `${join(targets, 'a.yml')}: entry 2 (url ftp://w:21): [1].targets[0]: must be http or https, not ftp:`,
      `${join(targets, 'a.yml')}: entry 2 (url ftp://w:21): [1].labels.server: "server" is a label the exporter sets itself`,
      expect.stringMatching(new RegExp(`^${join(targets, 'b.yml')}: not YAML or JSON: .* at line 2, column 1$`)),
    ]);
    writeFileSync(join(targets, 'a.yml'), '- targets: [wowza-1:8087]\n');
    writeFileSync(join(targets, 'b.yml'), '[]\n');
    expect(checkConfig({ config }, { WOWZA_PASSWORD: 'x' }).problems).toEqual([]);
  });

  it('a module whose timeout cannot fit the poll deadline, once, at the first entry that uses it', () => {
    const targets = join(dir, 'slow');
    mkdirSync(targets);
    writeFileSync(join(targets, 'a.yml'), '- targets: [w1:8087]\n  module: slow\n- targets: [w2:8087]\n  module: slow\n');
    const config = file('slow.yaml', `servers_files: [${join(targets, '*.yml')}]\npoll: {interval: 5s}\nmodules:\n  slow: {timeout: 10s}\n`);
    expect(checkConfig({ config }, {}).problems).toEqual([expect.stringMatching(new RegExp(`^${join(targets, 'a.yml')}: entry 1 \\(module slow\\): modules\\.slow\\.timeout: the request timeout \\(10s\\)`))]);
  });
});
