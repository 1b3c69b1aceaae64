import { isAscii } from 'node:buffer';
import { StringDecoder } from 'node:string_decoder';
import { SaxesParser } from 'saxes';
import { decodeJavaUrl } from './java-url-decoding.js';
import { streamKey } from './stream-key.js';
import { CONNECTION_COUNTS_ROOTS, XML_LIMITS, XmlGuard } from './xml-guard.js';

export { streamKey };

/**
 * The document of the `HTTPConnectionCountsXML` HTTP provider (`/connectioncounts` on the admin port, 8086 by
 * default; docs/wowza-api-notes.md): the whole server in one answer. Two forms are read:
 * - the tree: `<WowzaStreamingEngine>` > `VHost` > `Application` > `ApplicationInstance` > `Stream`, each with a
 *   `Name` element and counters as child elements (`SessionsFlash`, ..., `SessionsTotal` on streams);
 * - `?flat`: one `<Stream vhostName= applicationName= appInstanceName= streamName= sessionsFlash= .../>` per stream.
 * Elements and attributes this code does not know (newer servers add `SessionsWebRTC`) are kept as protocols
 * when they are session counts and ignored otherwise. Parsed by a streaming XML parser, so a document of
 * thousands of streams is never held as a tree, within the caps of XML_LIMITS.
 */

export interface StreamSessions {
  vhost: string;
  application: string;
  instance: string;
  stream: string;
  /** Sessions per protocol, by the provider's name without `Sessions` (`Flash`, `Cupertino`, `WebRTC`...). */
  sessions: Record<string, number>;
  /** `SessionsTotal`, when the document carries it. */
  total: number | undefined;
  /**
   * The key of the names as written, when decoding changed them (java-url-decoding.ts). Both optional members are
   * present from the start, so every stream's object has one shape (2,000 of them each poll).
   */
  writtenKey: string | undefined;
}

/** Why a document cannot be read; `tooLarge` when it passed the document size cap. */
export class ConnectionCountsError extends Error {
  constructor(
    message: string,
    readonly tooLarge = false,
  ) {
    super(message);
  }
}

/**
 * Streams in one document. A real server has tens of thousands at most; each costs a few hundred bytes here until
 * the collector has read them, so this bounds the memory a document can take (the size cap allows more).
 */
export const MAX_STREAMS = 250_000;

/**
 * The parse runs in slices of this many bytes, and yields to the event loop once its slices took SLICE_MS: a
 * document of any size (within the caps) never holds the thread that answers /metrics and the health checks
 * for longer than a slice, and the poll's deadline or a shutdown stops it between two.
 */
const SLICE_BYTES = 16 * 1024;
const SLICE_MS = 10;

/** The containers whose `Name` child names them, outermost first. */
const LEVELS = ['VHost', 'Application', 'ApplicationInstance', 'Stream'] as const;

/**
 * Adds a session count of one stream from a `Sessions*` name (an element name, or a flat attribute with a lowercase
 * `s`): the protocol is the name after those 8 letters. False, adding nothing, when `value` is not a count (a whole or
 * decimal number, not negative). This runs for every counter of every stream.
 */
function tryAddSession(into: StreamSessions, name: string, value: string): boolean {
  // Number() ignores surrounding whitespace, and reads nothing but whitespace as 0.
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || value.trim() === '') return false;
  const protocol = name.slice(8);
  if (protocol === 'Total') into.total = n;
  else if (protocol !== '') into.sessions[protocol] = n;
  return true;
}

/** tryAddSession, throwing for a value that is not a count; the message names the stream and the counter. */
function addSession(into: StreamSessions, name: string, value: string, stream: string): void {
  if (!tryAddSession(into, name, value)) throw new ConnectionCountsError(`stream ${stream} S${name.slice(1)} is not a count: ${JSON.stringify(value.slice(0, 40))}`);
}

/**
 * Names as the provider wrote them, URL-encoded (java-url-decoding.ts), are decoded to match the REST API's; the
 * written key is kept when it differs, for a server that does not encode. The stream's own object is kept, its names
 * decoded in place: one object and one key per stream, and a second key only for names that decoding changed.
 */
function keeper(out: Map<string, StreamSessions>): (s: StreamSessions) => void {
  return (s) => {
    const { vhost, application, instance, stream: name } = s;
    s.vhost = decodeJavaUrl(vhost);
    s.application = decodeJavaUrl(application);
    s.instance = decodeJavaUrl(instance);
    s.stream = decodeJavaUrl(name);
    const key = streamKey(s.vhost, s.application, s.instance, s.stream);
    if (s.vhost !== vhost || s.application !== application || s.instance !== instance || s.stream !== name) s.writtenKey = streamKey(vhost, application, instance, name);
    out.set(key, s);
    if (out.size > MAX_STREAMS) throw new ConnectionCountsError(`more than ${MAX_STREAMS} streams in one document`);
  };
}

export interface ParseOptions {
  /** Stops the parse between two slices (the poll's deadline, a shutdown): it rejects with the signal's reason. */
  signal?: AbortSignal;
  /** The document size cap: XML_LIMITS.documentBytes, or less. */
  maxBytes?: number;
  /**
   * The bytes already passed an XmlGuard of XML_LIMITS as they arrived (the client guards a document while it
   * downloads): the parse does not read them a second time for the caps.
   */
  guarded?: boolean;
}

/**
 * Every stream of the document, by `streamKey`. Rejects with a ConnectionCountsError naming what is wrong: not
 * well-formed, not a connectioncounts document, or past one of the caps (XML_LIMITS, MAX_STREAMS). Linear in the
 * document's size, and run in slices that yield to the event loop.
 */
export async function parseConnectionCounts(xml: string | Uint8Array, options: ParseOptions = {}): Promise<Map<string, StreamSessions>> {
  const bytes = typeof xml === 'string' ? Buffer.from(xml, 'utf8') : xml;
  const maxBytes = Math.min(options.maxBytes ?? Infinity, XML_LIMITS.documentBytes);
  if (bytes.length > maxBytes) throw new ConnectionCountsError(`XML document larger than ${maxBytes} bytes`, true);
  const out = new Map<string, StreamSessions>();
  const keep = keeper(out);
  if (options.guarded === true) {
    const flat = await readPlainFlat(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length), options.signal);
    if (flat) {
      for (const stream of flat) keep(stream);
      return out;
    }
  }
  const parser = new SaxesParser();
  // The lexical caps, checked on each slice before the parser reads it: the parser would otherwise build a name,
  // value or comment of any size before its handlers could refuse it.
  const guard = options.guarded === true ? undefined : new XmlGuard();
  // Per open element: its name, and for the four levels the `Name` read so far. As deep as XML_LIMITS.depth.
  const stack: Array<{ tag: string; name?: string }> = [];
  // The text of the current element: bounded by the guard (XML_LIMITS.valueBytes between two tags).
  let text = '';
  let stream: StreamSessions | undefined;

  // The innermost enclosing element of a level: a walk of the stack, which the depth cap keeps short.
  const nameOf = (level: (typeof LEVELS)[number]) => {
    for (let i = stack.length - 1; i >= 0; i--) if (stack[i]!.tag === level) return stack[i]!.name;
    return undefined;
  };

  // Handlers throw to stop the parse at the first problem: saxes would otherwise go on, and report every unclosed
  // element of a document nested thousands deep.
  parser.on('error', (err) => {
    throw new ConnectionCountsError(`not well-formed XML: ${err.message.split('\n')[0]}`);
  });
  parser.on('opentag', (tag) => {
    if (stack.length === 0 && !CONNECTION_COUNTS_ROOTS.has(tag.name)) {
      throw new ConnectionCountsError(`the root element is <${tag.name}>, not <WowzaStreamingEngine>: is this the connectioncounts URL?`);
    }
    if (stack.length >= XML_LIMITS.depth) throw new ConnectionCountsError(`XML nested deeper than ${XML_LIMITS.depth} levels`);
    const attrs = tag.attributes as Record<string, string>;
    if (tag.name === 'Stream' && attrs.streamName !== undefined) {
      // The flat form: everything in attributes.
      const s: StreamSessions = { vhost: attrs.vhostName ?? '', application: attrs.applicationName ?? '', instance: attrs.appInstanceName ?? '', stream: attrs.streamName, sessions: {}, total: undefined, writtenKey: undefined };
      for (const k in attrs) if (k.length > 8 && k.startsWith('sessions')) addSession(s, k, attrs[k]!, s.stream);
      keep(s);
      stack.push({ tag: tag.name, name: attrs.streamName });
      return;
    }
    if (tag.name === 'Stream') stream = { vhost: '', application: '', instance: '', stream: '', sessions: {}, total: undefined, writtenKey: undefined };
    stack.push({ tag: tag.name });
    text = '';
  });
  parser.on('text', (t) => {
    text += t;
  });
  parser.on('closetag', (tag) => {
    const closing = stack.pop();
    const parent = stack[stack.length - 1];
    if (tag.name === 'Name' && parent && (LEVELS as readonly string[]).includes(parent.tag)) parent.name = text.trim();
    else if (stream && parent?.tag === 'Stream' && tag.name.startsWith('Sessions')) addSession(stream, tag.name, text, parent.name ?? '?');
    else if (tag.name === 'Stream' && stream) {
      if (closing?.name === undefined) throw new ConnectionCountsError('a <Stream> has no <Name>');
      stream.vhost = nameOf('VHost') ?? '';
      stream.application = nameOf('Application') ?? '';
      stream.instance = nameOf('ApplicationInstance') ?? '';
      stream.stream = closing.name;
      keep(stream);
      stream = undefined;
    }
    text = '';
  });

  const decoder = new StringDecoder('utf8');
  let since = performance.now();
  try {
    for (let at = 0; at < bytes.length; at += SLICE_BYTES) {
      options.signal?.throwIfAborted();
      const slice = bytes.subarray(at, at + SLICE_BYTES);
      const refused = guard?.refuse(slice);
      if (refused) throw new ConnectionCountsError(refused);
      parser.write(decoder.write(slice));
      if (performance.now() - since >= SLICE_MS) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        since = performance.now();
      }
    }
    options.signal?.throwIfAborted();
    parser.write(decoder.end()).close();
  } catch (err) {
    if (err instanceof ConnectionCountsError || options.signal?.aborted) throw err;
    throw new ConnectionCountsError((err as Error).message.split('\n')[0]!);
  }
  return out;
}

const WS = (c: number) => c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d;
const LT = 0x3c;
const GT = 0x3e;
const SLASH = 0x2f;
const QUOT = 0x22;
const AMP = 0x26;
const EQUALS = 0x3d;
const ENTITIES: Readonly<Record<string, string>> = { '&lt;': '<', '&gt;': '>', '&amp;': '&', '&quot;': '"', '&apos;': "'" };
/** Elements read between two looks at the clock. */
const ELEMENTS_PER_LOOK = 512;

/**
 * The flat form as the provider writes it (`<?xml ...?><WowzaStreamingEngine><Stream vhostName="..." ...
 * sessionsTotal="3"/>...</WowzaStreamingEngine>`), read in one pass over its text: the streams with their names as
 * written, or undefined as soon as the document holds anything else (a tree, text, a comment, CDATA, an entity
 * beyond the five predefined ones, a character a name or value must not hold, single quotes, spaces around `=`, a
 * count that is not one...). The general parser reads such a document, and says what is wrong with it; on the shape
 * every poll of a connectioncounts collector gets, this costs a fraction of it and leaves less garbage. Only for
 * bytes the XmlGuard already held to XML_LIMITS (the client's, as they arrived): nothing here checks those caps again.
 *
 * The reading is done by small synchronous functions (a batch of elements, one element): this one only yields
 * between batches. As one async function with its loops inside, V8 compiled it with TurboFan (OSR and whole) at
 * 40-160 ms of compiler time and megabytes of compiler memory a time, and threw the code away again at the next
 * poll (its once-per-document paths had no type feedback): six times in two minutes, most of what connectioncounts
 * cost the exporter beyond its polls.
 */
export async function readPlainFlat(bytes: Buffer, signal: AbortSignal | undefined): Promise<StreamSessions[] | undefined> {
  // Latin-1 decoding is a copy; UTF-8 decoding reads every byte in V8's own loop, about five times the cost.
  const t = bytes.toString(isAscii(bytes) ? 'latin1' : 'utf8');
  const head = flatPrologue(t);
  if (head === undefined) return undefined;
  const { root } = head;
  let at = head.at;
  const streams: StreamSessions[] = [];
  const names: string[] = [];
  for (;;) {
    const since = performance.now();
    // Batches of ELEMENTS_PER_LOOK until a slice's time is used up.
    do {
      at = readFlatBatch(t, at, root, names, streams);
      if (at === NOT_PLAIN) return undefined;
      if (at === DOCUMENT_END) return streams;
      if (streams.length > MAX_STREAMS) return streams; // refused as the general parse would, by the caller
    } while (performance.now() - since < SLICE_MS);
    signal?.throwIfAborted();
    await new Promise<void>((resolve) => setImmediate(resolve));
    signal?.throwIfAborted();
  }
}

/** readFlatBatch's answer when the document is not the plain flat form. */
const NOT_PLAIN = -1;
/** readFlatBatch's answer when it read the root's end tag, and nothing but white space after it. */
const DOCUMENT_END = -2;

function skipSpace(t: string, at: number): number {
  while (at < t.length && WS(t.charCodeAt(at))) at++;
  return at;
}

/** The root element's name and where its content starts, after an XML declaration; undefined for another start. */
function flatPrologue(t: string): { root: string; at: number } | undefined {
  let at = skipSpace(t, 0);
  if (t.startsWith('<?', at)) {
    const end = t.indexOf('?>', at);
    if (end < 0) return undefined;
    at = skipSpace(t, end + 2);
  }
  if (t.charCodeAt(at) !== LT) return undefined;
  const rootEnd = t.indexOf('>', at);
  if (rootEnd < 0) return undefined;
  const root = t.slice(at + 1, rootEnd);
  if (!CONNECTION_COUNTS_ROOTS.has(root)) return undefined;
  return { root, at: rootEnd + 1 };
}

/**
 * Up to ELEMENTS_PER_LOOK `<Stream .../>` elements from `at`, added to `streams`: where the next one starts,
 * DOCUMENT_END after the root's end tag, or NOT_PLAIN.
 */
function readFlatBatch(t: string, at: number, root: string, names: string[], streams: StreamSessions[]): number {
  for (let k = 0; k < ELEMENTS_PER_LOOK; k++) {
    at = skipSpace(t, at);
    if (t.charCodeAt(at) !== LT) return NOT_PLAIN;
    if (t.charCodeAt(at + 1) === SLASH) return flatEnd(t, at, root);
    if (!t.startsWith('Stream', at + 1) || !WS(t.charCodeAt(at + 7))) return NOT_PLAIN;
    at = readFlatStream(t, at + 7, names, streams);
    if (at === NOT_PLAIN) return NOT_PLAIN;
  }
  return at;
}

/** The root's end tag at `at`, then nothing but white space: DOCUMENT_END, else NOT_PLAIN. */
function flatEnd(t: string, at: number, root: string): number {
  if (!t.startsWith(root, at + 2)) return NOT_PLAIN;
  at = skipSpace(t, at + 2 + root.length);
  if (t.charCodeAt(at) !== GT) return NOT_PLAIN;
  return skipSpace(t, at + 1) === t.length ? DOCUMENT_END : NOT_PLAIN;
}

/** The attributes of one `<Stream` from `at` (after its name) to its `/>`, as a stream added to `streams`: where it ends, or NOT_PLAIN. */
function readFlatStream(t: string, at: number, names: string[], streams: StreamSessions[]): number {
  const s: StreamSessions = { vhost: '', application: '', instance: '', stream: '', sessions: {}, total: undefined, writtenKey: undefined };
  let streamName: string | undefined;
  names.length = 0;
  for (;;) {
    at = skipSpace(t, at);
    if (t.charCodeAt(at) === SLASH && t.charCodeAt(at + 1) === GT) {
      at += 2;
      break;
    }
    const nameStart = at;
    while ((t.charCodeAt(at) | 0x20) >= 0x61 && (t.charCodeAt(at) | 0x20) <= 0x7a) at++;
    if (at === nameStart || t.charCodeAt(at) !== EQUALS || t.charCodeAt(at + 1) !== QUOT) return NOT_PLAIN;
    const name = t.slice(nameStart, at);
    if (names.includes(name)) return NOT_PLAIN;
    names.push(name);
    const valueStart = at + 2;
    const valueEnd = t.indexOf('"', valueStart);
    if (valueEnd < 0) return NOT_PLAIN;
    let entities = false;
    for (let i = valueStart; i < valueEnd; i++) {
      const c = t.charCodeAt(i);
      if (c < 0x20 || c === LT || c === 0xfffd) return NOT_PLAIN; // 0xfffd: bytes that are not UTF-8, or were
      if (c === AMP) entities = true;
    }
    let value = t.slice(valueStart, valueEnd);
    if (entities) {
      const decoded = decodePredefinedEntities(value);
      if (decoded === undefined) return NOT_PLAIN;
      value = decoded;
    }
    at = valueEnd + 1;
    if (!WS(t.charCodeAt(at)) && t.charCodeAt(at) !== SLASH) return NOT_PLAIN;
    if (name === 'vhostName') s.vhost = value;
    else if (name === 'applicationName') s.application = value;
    else if (name === 'appInstanceName') s.instance = value;
    else if (name === 'streamName') streamName = value;
    // Not a count: the general parse says so, naming the stream.
    else if (name.length > 8 && name.startsWith('sessions') && !tryAddSession(s, name, value)) return NOT_PLAIN;
  }
  if (streamName === undefined) return NOT_PLAIN;
  s.stream = streamName;
  streams.push(s);
  return at;
}

/** `&lt;` `&gt;` `&amp;` `&quot;` `&apos;` decoded; undefined when the text holds another `&`. */
function decodePredefinedEntities(text: string): string | undefined {
  let bad = false;
  const decoded = text.replace(/&[^;&]{0,6};?/g, (m) => {
    const c = ENTITIES[m];
    if (c === undefined) bad = true;
    return c ?? m;
  });
  return bad ? undefined : decoded;
}
