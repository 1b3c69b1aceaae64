import { mkdirSync, mkdtempSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../../src/config/errors.js';
import { checkConfig, loadConfig } from '../../../src/config/load.js';
import { checkRegularFile, CONFIG_FILE_MAX_BYTES, MiB, readRegularFile } from '../../../src/config/read-file.js';
import { readSecretFile } from '../../../src/config/secrets.js';
import { parseYaml, YamlSyntaxError } from '../../../src/config/yaml.js';
import { configError } from '../../helpers/config-error.js';

/**
 * Issue 47: the files the configuration names are read only when they are regular files (a symlink is followed to
 * one), of a bounded size, and nothing of a file that is not a config is ever shown. FIFOs are tested through the
 * CLI (test/e2e/config-check.test.ts), under a spawn timeout: a regression would block this worker for good.
 */

const dir = mkdtempSync(join(tmpdir(), 'wowza-read-file-'));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text, { mode: 0o600 });
  return p;
};
const link = (name: string, to: string) => {
  const p = join(dir, name);
  symlinkSync(to, p);
  return p;
};


/** Lines of /etc/passwd and /etc/shadow: the first is a YAML scalar, the second (a trailing colon) YAML keys. */
const PASSWD = 'root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n';
const SHADOW = 'root:$6$pepper$Zq3hashedpasswordvalue:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n';
const LEAKS = /x:0:0|bin\/bash|nologin|pepper|Zq3hashed|99999|root|daemon/;

describe('readRegularFile', () => {
  it('reads a regular file, and one a symlink points to', () => {
    const p = file('plain.yaml', 'poll:\n  interval: 15s\n');
    expect(readRegularFile(p, '--config', CONFIG_FILE_MAX_BYTES, 'a config file').text).toBe('poll:\n  interval: 15s\n');
    expect(readRegularFile(link('to-plain.yaml', p), '--config', CONFIG_FILE_MAX_BYTES, 'a config file').text).toBe('poll:\n  interval: 15s\n');
  });

  it('refuses a directory, a device (directly or through a symlink), a missing file and a broken symlink, in one line', () => {
    const sub = join(dir, 'a-directory');
    mkdirSync(sub);
    const cases: Array<[string, RegExp]> = [
      [sub, /^--config: .*a-directory is a directory, not a regular file; give the path of a config file$/],
      ['/dev/zero', /^--config: \/dev\/zero is a character device, not a regular file; give the path of a config file$/],
      [link('zero.yaml', '/dev/zero'), /^--config: .*zero\.yaml is a character device, not a regular file/],
      [link('null.yaml', '/dev/null'), /^--config: .*null\.yaml is a character device, not a regular file/],
      [join(dir, 'missing.yaml'), /^--config: cannot read .*missing\.yaml \(ENOENT\)$/],
      [link('dangling.yaml', join(dir, 'nowhere')), /^--config: cannot read .*dangling\.yaml \(ENOENT\)$/],
    ];
    for (const [path, expected] of cases) {
      expect(configError(() => readRegularFile(path, '--config', CONFIG_FILE_MAX_BYTES, 'a config file')), path).toMatch(expected);
      expect(() => checkRegularFile(path, '--config', 'a config file')).toThrow(ConfigError);
    }
  });

  it('refuses a file over the limit, saying the limit, before reading it', () => {
    const big = file('big.yaml', '');
    truncateSync(big, CONFIG_FILE_MAX_BYTES + 1); // sparse: nothing is written
    expect(configError(() => readRegularFile(big, '--config', CONFIG_FILE_MAX_BYTES, 'a config file'))).toBe(`--config: ${big} is larger than 4 MiB, the limit for a config file`);
    expect(configError(() => checkRegularFile(big, '--config', 'a config file', CONFIG_FILE_MAX_BYTES))).toMatch(/larger than 4 MiB/);
    const exact = file('exact.yaml', 'x'.repeat(MiB));
    expect(readRegularFile(exact, 'f', MiB, 'a file').text).toHaveLength(MiB);
  });

  it('a secret file is read the same way: a symlink to a device is refused, the secret is never shown', () => {
    expect(configError(() => readSecretFile(link('pw-zero', '/dev/zero'), 'servers[0].password_file'))).toMatch(/^servers\[0\]\.password_file: .*pw-zero is a character device, not a regular file; give the path of a secret file$/);
    const pw = file('pw', 'hunter2\n');
    expect(readSecretFile(link('pw-link', pw), 'f')).toBe('hunter2');
  });
});

describe('the config file', () => {
  it('a symlink to /etc/shadow or /etc/passwd lines: one line saying it is no config, none of its text', () => {
    for (const [name, text] of [['shadow', SHADOW], ['passwd', PASSWD]] as const) {
      const target = file(name, text);
      const config = link(`${name}.yaml`, target);
      const serve = configError(() => loadConfig({ config }, {}));
      expect(serve).toMatch(new RegExp(`^${config}: the top level must be a mapping of config keys .*\\(its content is not shown\\)$`));
      const { problems } = checkConfig({ config }, {});
      expect(problems).toEqual([serve]);
      expect(serve.replace(dir, '')).not.toMatch(LEAKS);
    }
  });

  it('a real config with a typo still names the unknown key, with a suggestion', () => {
    const config = file('typo.yaml', 'servers:\n  - url: http://127.0.0.1:8087\npol:\n  interval: 15s\npoll interval: 15s\n');
    const { problems } = checkConfig({ config }, {});
    expect(problems).toEqual(['pol: unknown key (did you mean "poll"?)', 'poll interval: unknown key']);
  });

  it('a syntax error names the line and column, never the text around it', () => {
    const cases = ['servers:\n  - url: "\\q-secret-escape"\n', 'servers: [\n  s3cret-value\n', 'a: |s3cret\n  x\n', 'a: *s3cret\n'];
    for (const text of cases) {
      const message = configError(() => loadConfig({ config: file('syntax.yaml', text) }, {}));
      expect(message, text).toMatch(/syntax\.yaml: invalid YAML: .* at line \d+, column \d+$|syntax\.yaml: invalid YAML: an alias/);
      expect(message, text).not.toMatch(/s3cret|secret-escape/);
      expect(message.split('\n'), text).toHaveLength(1);
    }
  });
});

describe('parseYaml', () => {
  afterEach(() => vi.restoreAllMocks());

  it('throws one line without the file, and prints none of yaml\'s warnings (they quote the file)', () => {
    const emitted = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    expect(parseYaml('a: !s3cret-tag value\n')).toEqual({ a: 'value' });
    expect(parseYaml('%BOGUS s3cret\n---\na: 1\n')).toEqual({ a: 1 });
    expect(emitted).not.toHaveBeenCalled();
    let error: unknown;
    try {
      parseYaml('a: b: c: s3cret\n');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(YamlSyntaxError);
    expect((error as Error).message).toMatch(/ at line 1, column \d+$/);
    expect((error as Error).message).not.toContain('s3cret');
  });
});
