import { redactSecrets } from './redact.js';

/**
 * What servers, proxies and log receivers answer may quote the request back: the Authorization header, the
 * password itself, URL-encoded, JSON-escaped or base64-encoded. Every secret the exporter holds (WSE and module
 * passwords, sink passwords and tokens, the Video token, the webhook secret) is registered here once, and every
 * text from the network is scrubbed of all of them, in every form, before a log line, the status API, a dead
 * letter, `doctor` or an error message shows it.
 */

const REDACTED = '[REDACTED]';

/** Shorter base64 pieces (of a secret at an offset) would match unrelated text. */
const MIN_PIECE = 4;

/** With `cut`, a text ending in at least this many first characters of a secret loses them. */
const MIN_CUT = 3;

/**
 * Credentials after an auth scheme, as a receiver quotes an `Authorization` header: a token, or Digest's
 * parameters (quoted values included, the first one too).
 */
const AUTH_SCHEME = /\b(Basic|Bearer|Digest)\s+(?:\w+=(?:"[^"]*"|[^\s,"]+)(?:\s*,\s*\w+=(?:"[^"]*"|[^\s,"]+))*|[^\s"',;]+(?:\s*,\s*\w+=(?:"[^"]*"|[^\s,"]+))*)/gi;

/**
 * Characters of a secret the pattern pass looks for first: each written form is found by its start, then matched
 * whole. One pattern of every form of a long token (a JWT) is too big for V8 to compile to machine code, and runs
 * 30 times slower.
 */
const HEAD_CHARS = 8;

/** A secret written otherwise than as itself holds one of these (URL, JSON and HTML escapes, `+` for a space). */
const ESCAPES = ['%', '\\', '&', '+'];

function anyCase(word: string): string {
  return word.replace(/[a-z]/gi, (c) => `[${c.toLowerCase()}${c.toUpperCase()}]`);
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/** `n` in hex, at least `width` digits, matching either case of each letter (`%2f` and `%2F`, `\u00e9` and `\u00E9`). */
function hex(n: number, width: number): string {
  return anyCase(n.toString(16).padStart(width, '0'));
}

/** The escapes JSON.stringify (and JSON writers that escape `/`) use instead of `\uXXXX`. */
const JSON_ESCAPES: Readonly<Record<string, string>> = { '"': '\\"', '\\': '\\\\', '/': '\\/', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const HTML_ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/**
 * One character in any of the ways it is written: as itself, URL-encoded (`%XX` per UTF-8 byte, `+` for a space),
 * JSON-escaped (`\uXXXX`, or a short escape) or as an HTML character reference. A secret is the sequence of its
 * characters' patterns, so every mix of forms matches (encodeURIComponent leaves some characters as they are).
 */
function charPattern(ch: string): string {
  const cp = ch.codePointAt(0)!;
  const alts = [[...Buffer.from(ch, 'utf8')].map((b) => `%${hex(b, 2)}`).join('')];
  if (ch === ' ') alts.push('\\+');
  const units = cp > 0xffff ? [0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + ((cp - 0x10000) & 0x3ff)] : [cp];
  // `\\+`: JSON quoted in JSON escapes the escapes (`\\u0021`, `\\\"`).
  alts.push(units.map((u) => `\\\\+u${hex(u, 4)}`).join(''));
  if (JSON_ESCAPES[ch]) alts.push(`\\\\+${escapeRegex(JSON_ESCAPES[ch].slice(1))}`);
  alts.push(`&#0*${cp};`, `&#[xX]0*${hex(cp, 1)};`);
  if (HTML_ENTITIES[ch]) alts.push(HTML_ENTITIES[ch]);
  // Itself last: `\\` is one escaped backslash, not two.
  alts.push(escapeRegex(ch));
  return `(?:${alts.join('|')})`;
}

/**
 * The base64 text of `bytes` wherever they stand in a longer encoded text: for each of the 3 byte offsets, the
 * characters that only those bytes decide (the first and last ones also depend on the neighbours). Found inside
 * the base64 of `user:secret` whatever the user, of a JSON body, of a header.
 */
function base64Pieces(bytes: Buffer): string[] {
  const out: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const piece = encoded.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + bytes.length)) / 6));
    if (piece.length >= MIN_PIECE) out.push(piece);
  }
  return out;
}

/**
 * The base64 forms of a secret, which do not change character by character: standard and URL-safe alphabets, `/`
 * JSON-escaped too; also of the secret JSON-escaped (a JSON document in base64: a JWT's claims, a quoted body).
 */
function base64Forms(value: string, users: Iterable<string>): string[] {
  const whole = [value, ...[...users].map((u) => `${u}:${value}`)].map((s) => Buffer.from(s, 'utf8').toString('base64'));
  const escaped = JSON.stringify(value).slice(1, -1);
  const pieces = [value, ...(escaped === value ? [] : [escaped])].flatMap((v) => base64Pieces(Buffer.from(v, 'utf8')));
  const forms = [...whole, ...pieces];
  const urlSafe = forms.map((f) => f.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''));
  const slashEscaped = forms.filter((f) => f.includes('/')).map((f) => f.replace(/\//g, '\\/'));
  return [...new Set([...forms, ...urlSafe, ...slashEscaped])].filter((f) => f.length >= MIN_PIECE);
}

/** A secret's characters each in any of the ways they are written: found by its start, then matched whole. */
interface Written {
  head: string;
  /** Sticky: tried where a head matched. */
  whole: RegExp;
  length: number;
}

interface Compiled {
  /** Forms that are one string (the secret itself, its base64 forms), found with indexOf. */
  strings: string[];
  /** The heads of `written`, one alternation; undefined when no secret is registered. */
  heads: RegExp | undefined;
  /** Longest first, so a secret is not cut short by another one it starts with. */
  written: Written[];
  /** Strings whose start may end a cut text: each secret as it is, URL-encoded (3 ways), JSON-escaped, its base64 forms. */
  starts: string[];
}

/** The configured secrets of a process, and the scrubbing of text of them. Patterns are built once per change. */
export class SecretScrubber {
  /** Each secret and the users it goes with (for the base64 of `user:secret`). */
  private readonly secrets = new Map<string, Set<string>>();
  private compiled: Compiled | undefined;

  /** Registers a secret (and the user it is sent with); empty values are ignored, a known one costs a lookup. */
  add(value: string | undefined, user?: string): void {
    if (!value) return;
    let users = this.secrets.get(value);
    if (!users) {
      users = new Set();
      this.secrets.set(value, users);
      this.compiled = undefined;
    }
    if (user !== undefined && !users.has(user)) {
      users.add(user);
      this.compiled = undefined;
    }
  }

  /**
   * Blanks the configured secrets in every form: for text the exporter composed around what it was told (its
   * own words name auth schemes, which {@link scrubReceived} would take for credentials).
   */
  scrub(text: string): string {
    const c = this.compile();
    if (!c.heads) return text;
    const spans: Array<[number, number]> = [];
    for (const s of c.strings) {
      for (let at = text.indexOf(s); at >= 0; at = text.indexOf(s, at + 1)) spans.push([at, at + s.length]);
    }
    // Written any other way, a secret holds an escape: most texts have none and skip the pattern pass.
    if (ESCAPES.some((e) => text.includes(e))) spans.push(...writtenSpans(text, c));
    if (spans.length === 0) return text;
    spans.sort((a, b) => a[0] - b[0]);
    let out = '';
    let from = 0;
    for (const [start, end] of spans) {
      if (end <= from) continue; // within the span before
      // One mark for spans that overlap (a secret and the base64 of `user:secret` around it).
      if (start > from || from === 0) out += text.slice(from, start) + REDACTED;
      from = end;
    }
    return out + text.slice(from);
  }

  /**
   * Blanks what text from the network may quote: the configured secrets in every form, credentials after an auth
   * scheme, the user info of URLs and token-like query values. With `cut`, the text may end inside a secret (it
   * was cut before it got here): a trailing start of one goes too.
   */
  scrubReceived(text: string, options: { cut?: boolean } = {}): string {
    let out = this.scrub(text);
    if (options.cut) out = cutStarts(out, this.compile().starts);
    return redactSecrets(out.replace(AUTH_SCHEME, `$1 ${REDACTED}`));
  }

  private compile(): Compiled {
    if (this.compiled) return this.compiled;
    const strings: string[] = [];
    const written: Written[] = [];
    const starts: string[] = [];
    for (const [value, users] of this.secrets) {
      const chars = [...value].map(charPattern);
      written.push({ head: chars.slice(0, HEAD_CHARS).join(''), whole: new RegExp(chars.join(''), 'y'), length: value.length });
      const everyByte = [...Buffer.from(value, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
      const base64 = base64Forms(value, users);
      strings.push(value, ...base64);
      const form = new URLSearchParams({ v: value }).toString().slice(2);
      starts.push(value, encodeURIComponent(value), form, everyByte, JSON.stringify(value).slice(1, -1), ...base64);
    }
    written.sort((a, b) => b.length - a.length);
    this.compiled = {
      strings: [...new Set(strings)],
      heads: written.length > 0 ? new RegExp([...new Set(written.map((w) => w.head))].join('|'), 'g') : undefined,
      written,
      starts: [...new Set(starts)].filter((h) => h.length > MIN_CUT),
    };
    return this.compiled;
  }
}

/** Where a secret written with escapes (or mixed) stands in `text`. */
function writtenSpans(text: string, c: Compiled): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  const heads = c.heads!;
  heads.lastIndex = 0;
  for (let m = heads.exec(text); m !== null; m = heads.exec(text)) {
    const at = m.index;
    const found = c.written.find((w) => {
      w.whole.lastIndex = at;
      return w.whole.test(text);
    });
    if (found) spans.push([at, found.whole.lastIndex]);
    heads.lastIndex = found ? found.whole.lastIndex : at + 1;
  }
  return spans;
}

/** `text` without a trailing start (at least MIN_CUT characters, not the whole) of any of `starts`. */
function cutStarts(text: string, starts: readonly string[]): string {
  let longest = 0;
  for (const head of starts) {
    for (let k = Math.min(head.length - 1, text.length); k >= MIN_CUT && k > longest; k--) {
      const start = text.length - k;
      let i = 0;
      while (i < k && text.charCodeAt(start + i) === head.charCodeAt(i)) i++;
      if (i === k) {
        longest = k;
        break;
      }
    }
  }
  return longest > 0 ? text.slice(0, -longest) + REDACTED : text;
}

/** The process's scrubber: the commands register the configuration's secrets, the sinks and clients their own. */
export const configuredSecrets = new SecretScrubber();

/** Registers a secret of this process (see {@link SecretScrubber.add}). */
export function registerSecret(value: string | undefined, user?: string): void {
  configuredSecrets.add(value, user);
}

/**
 * A password held by whoever scrubs (a Wowza target, the server `doctor` checks), scrubbed besides the process's:
 * the commands register the configured ones, but a client built elsewhere (tests, library use) has its own.
 */
export interface OwnSecret {
  password?: string;
  username?: string;
}

/** Scrubbers of one password each, so each is compiled once; bounded, as targets come and go. */
const owners = new Map<string, SecretScrubber>();
const MAX_OWNERS = 64;

function ownScrubber(own: OwnSecret | undefined): SecretScrubber | undefined {
  if (!own?.password) return undefined;
  const key = `${own.username ?? ''}\u0000${own.password}`;
  let scrubber = owners.get(key);
  if (!scrubber) {
    if (owners.size >= MAX_OWNERS) owners.clear();
    scrubber = new SecretScrubber();
    scrubber.add(own.password, own.username);
    owners.set(key, scrubber);
  }
  return scrubber;
}

/** The process's secrets (and `own`) blanked in every form from text the exporter composed (see {@link SecretScrubber.scrub}). */
export function scrubSecrets(text: string, own?: OwnSecret): string {
  const out = configuredSecrets.scrub(text);
  return ownScrubber(own)?.scrub(out) ?? out;
}

/** Text from the network scrubbed of the process's secrets (and `own`) and of quoted credentials (see {@link SecretScrubber.scrubReceived}). */
export function scrubReceived(text: string, options: { cut?: boolean; own?: OwnSecret } = {}): string {
  const out = configuredSecrets.scrubReceived(text, options);
  return ownScrubber(options.own)?.scrubReceived(out, options) ?? out;
}
