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
  total?: number;
  /** The key of the names as written, when decoding changed them (java-url-decoding.ts). */
  writtenKey?: string;
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

/** A count (a whole or decimal number, not negative); the error names the stream and the counter. */
function count(text: string, name: string, stream: string): number {
  // Number() ignores surrounding whitespace, and reads nothing but whitespace as 0.
  const n = Number(text);
  if (!Number.isFinite(n) || n < 0 || text.trim() === '') throw new ConnectionCountsError(`stream ${stream} S${name.slice(1)} is not a count: ${JSON.stringify(text.slice(0, 40))}`);
  return n;
}

/**
 * Session counts of one stream from `Sessions*` names (element names, or flat attributes with a lowercase `s`): the
 * protocol is the name after those 8 letters. The message of a bad count is built only when there is one: this runs
 * for every counter of every stream.
 */
function addSession(into: StreamSessions, name: string, value: string, stream: string): void {
  const protocol = name.slice(8);
  const n = count(value, name, stream);
  if (protocol === 'Total') into.total = n;
  else if (protocol !== '') into.sessions[protocol] = n;
}

export interface ParseOptions {
  /** Stops the parse between two slices (the poll's deadline, a shutdown): it rejects with the signal's reason. */
  signal?: AbortSignal;
  /** The document size cap: XML_LIMITS.documentBytes, or less. */
  maxBytes?: number;
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
  const parser = new SaxesParser();
  // The lexical caps, checked on each slice before the parser reads it: the parser would otherwise build a name,
  // value or comment of any size before its handlers could refuse it.
  const guard = new XmlGuard();
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
  // Names as the provider wrote them, URL-encoded (java-url-decoding.ts), are decoded to match the REST API's; the
  // written key is kept when it differs, for a server that does not encode.
  const keep = (written: StreamSessions) => {
    const s = { ...written, vhost: decodeJavaUrl(written.vhost), application: decodeJavaUrl(written.application), instance: decodeJavaUrl(written.instance), stream: decodeJavaUrl(written.stream) };
    const writtenKey = streamKey(written.vhost, written.application, written.instance, written.stream);
    const key = streamKey(s.vhost, s.application, s.instance, s.stream);
    if (writtenKey !== key) s.writtenKey = writtenKey;
    out.set(key, s);
    if (out.size > MAX_STREAMS) throw new ConnectionCountsError(`more than ${MAX_STREAMS} streams in one document`);
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
      const s: StreamSessions = { vhost: attrs.vhostName ?? '', application: attrs.applicationName ?? '', instance: attrs.appInstanceName ?? '', stream: attrs.streamName, sessions: {} };
      for (const k in attrs) if (k.length > 8 && k.startsWith('sessions')) addSession(s, k, attrs[k]!, s.stream);
      keep(s);
      stack.push({ tag: tag.name, name: attrs.streamName });
      return;
    }
    if (tag.name === 'Stream') stream = { vhost: '', application: '', instance: '', stream: '', sessions: {} };
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
      keep({ ...stream, vhost: nameOf('VHost') ?? '', application: nameOf('Application') ?? '', instance: nameOf('ApplicationInstance') ?? '', stream: closing.name });
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
      const refused = guard.refuse(slice);
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
