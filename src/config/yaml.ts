import { createRequire } from 'node:module';

type YamlModule = typeof import('yaml');
let yaml: YamlModule | undefined;

/**
 * A YAML syntax error whose message never quotes the file: a file given by mistake may be a secret (issue 47), and
 * yaml's own messages show the offending line, and for some errors (tags, escapes, directives) its text.
 */
export class YamlSyntaxError extends Error {
  override name = 'YamlSyntaxError';
}

/** yaml's error codes whose messages are fixed words, so they are shown as they are. */
const PLAIN_MESSAGES = new Set([
  'ALIAS_PROPS', 'BAD_ALIAS', 'BAD_INDENT', 'BAD_PROP_ORDER', 'BAD_SCALAR_START', 'BLOCK_AS_IMPLICIT_KEY', 'BLOCK_IN_FLOW', 'DUPLICATE_KEY',
  'KEY_OVER_1024_CHARS', 'MISSING_CHAR', 'MULTILINE_IMPLICIT_KEY', 'MULTIPLE_ANCHORS', 'MULTIPLE_DOCS', 'MULTIPLE_TAGS', 'NON_STRING_KEY',
  'RESOURCE_EXHAUSTION', 'TAB_AS_INDENT',
]);

/** The codes whose messages may quote the file (a tag, an escape, a directive, a token), in words of our own. */
const OWN_WORDS: Record<string, string> = {
  BAD_DIRECTIVE: 'a bad or unsupported % directive',
  BAD_DQ_ESCAPE: 'an invalid escape sequence in a double-quoted string',
  TAG_RESOLVE_FAILED: 'a tag (!name) that is not a YAML type',
  BAD_COLLECTION_TYPE: 'a tag that does not fit its collection',
  UNEXPECTED_TOKEN: 'an unexpected token',
};

function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, Math.max(0, offset));
  const line = before.split('\n').length;
  return `line ${line}, column ${before.length - before.lastIndexOf('\n')}`;
}

function describeYamlError(err: unknown, text: string): string {
  const e = err as { code?: string; message?: string; pos?: [number, number] };
  const at = Array.isArray(e.pos) ? ` at ${lineAndColumn(text, e.pos[0])}` : '';
  if (e.code && PLAIN_MESSAGES.has(e.code) && e.message) return `${e.message.split('\n')[0]!.slice(0, 200)}${at}`;
  if (e.code) return `${OWN_WORDS[e.code] ?? e.code.toLowerCase().replaceAll('_', ' ')}${at}`;
  // Thrown while building the values: an alias (whose name the message quotes) or too many of them.
  const message = String(e.message ?? '');
  if (message.startsWith('Unresolved alias')) return 'an alias (*name) whose anchor (&name) is not set before it';
  if (message.startsWith('Excessive alias count')) return 'too many aliases (a resource exhaustion attack?)';
  return 'cannot be read as YAML';
}

/**
 * `yaml`'s `parse`, loaded the first time a file is read: `serve` configured by flags alone never reads YAML and
 * does not keep the parser (about 1 MB) in memory (issue 27). Loading is synchronous (the package's CommonJS
 * build) because the configuration is read synchronously. Throws YamlSyntaxError (one line, no content);
 * yaml's warnings, which quote the file on stderr, are not printed.
 */
export function parseYaml(text: string): unknown {
  yaml ??= createRequire(import.meta.url)('yaml') as YamlModule;
  try {
    return yaml.parse(text, { prettyErrors: false, logLevel: 'error' });
  } catch (err) {
    throw new YamlSyntaxError(describeYamlError(err, text));
  }
}
