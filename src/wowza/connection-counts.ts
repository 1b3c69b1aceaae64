import { SaxesParser } from 'saxes';
import { streamKey } from './stream-key.js';

export { streamKey };

/**
 * The document of the `HTTPConnectionCountsXML` HTTP provider (`/connectioncounts` on the admin port, 8086 by
 * default; ../shared/wowza-api.md): the whole server in one answer. Two forms are read:
 * - the tree: `<WowzaStreamingEngine>` > `VHost` > `Application` > `ApplicationInstance` > `Stream`, each with a
 *   `Name` element and counters as child elements (`SessionsFlash`, ..., `SessionsTotal` on streams);
 * - `?flat`: one `<Stream vhostName= applicationName= appInstanceName= streamName= sessionsFlash= .../>` per stream.
 * Elements and attributes this code does not know (newer servers add `SessionsWebRTC`) are kept as protocols
 * when they are session counts and ignored otherwise. Parsed by a streaming XML parser, so a document of
 * thousands of streams is never held as a tree.
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
}

export class ConnectionCountsError extends Error {}

/** The root elements of the document, by server generation. */
const ROOTS = new Set(['WowzaStreamingEngine', 'WowzaMediaServer']);
/** The containers whose `Name` child names them, outermost first. */
const LEVELS = ['VHost', 'Application', 'ApplicationInstance', 'Stream'] as const;

function count(what: string, text: string): number {
  const n = Number(text.trim());
  if (text.trim() === '' || !Number.isFinite(n) || n < 0) throw new ConnectionCountsError(`${what} is not a count: ${JSON.stringify(text.slice(0, 40))}`);
  return n;
}

/** Session counts of one stream from `Sessions*` names (element names, or flat attributes with a lowercase `s`). */
function addSession(into: StreamSessions, name: string, value: string, where: string): void {
  const protocol = name.slice('Sessions'.length);
  const n = count(`${where} ${name}`, value);
  if (protocol === 'Total') into.total = n;
  else if (protocol !== '') into.sessions[protocol] = n;
}

/** Every stream of the document, by `streamKey`. Throws ConnectionCountsError naming what is wrong. */
export function parseConnectionCounts(xml: string): Map<string, StreamSessions> {
  const out = new Map<string, StreamSessions>();
  const parser = new SaxesParser();
  // Per open element: its name, and for the four levels the `Name` read so far.
  const stack: Array<{ tag: string; name?: string }> = [];
  let text = '';
  let stream: StreamSessions | undefined;
  let failure: Error | undefined;

  const nameOf = (level: (typeof LEVELS)[number]) => [...stack].reverse().find((e) => e.tag === level)?.name;

  parser.on('error', (err) => {
    failure ??= new ConnectionCountsError(`not well-formed XML: ${err.message.split('\n')[0]}`);
  });
  parser.on('opentag', (tag) => {
    if (stack.length === 0 && !ROOTS.has(tag.name)) {
      failure ??= new ConnectionCountsError(`the root element is <${tag.name}>, not <WowzaStreamingEngine>: is this the connectioncounts URL?`);
    }
    const attrs = tag.attributes as Record<string, string>;
    if (tag.name === 'Stream' && attrs.streamName !== undefined) {
      // The flat form: everything in attributes.
      const s: StreamSessions = { vhost: attrs.vhostName ?? '', application: attrs.applicationName ?? '', instance: attrs.appInstanceName ?? '', stream: attrs.streamName, sessions: {} };
      for (const [k, v] of Object.entries(attrs)) if (/^sessions./.test(k)) addSession(s, `S${k.slice(1)}`, v, `stream ${s.stream}`);
      out.set(streamKey(s.vhost, s.application, s.instance, s.stream), s);
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
    else if (stream && parent?.tag === 'Stream' && tag.name.startsWith('Sessions')) addSession(stream, tag.name, text, `stream ${parent.name ?? '?'}`);
    else if (tag.name === 'Stream' && stream) {
      if (closing?.name === undefined) failure ??= new ConnectionCountsError('a <Stream> has no <Name>');
      const s = { ...stream, vhost: nameOf('VHost') ?? '', application: nameOf('Application') ?? '', instance: nameOf('ApplicationInstance') ?? '', stream: closing?.name ?? '' };
      out.set(streamKey(s.vhost, s.application, s.instance, s.stream), s);
      stream = undefined;
    }
    text = '';
  });

  try {
    parser.write(xml).close();
  } catch (err) {
    failure ??= err instanceof ConnectionCountsError ? err : new ConnectionCountsError((err as Error).message.split('\n')[0]!);
  }
  if (failure) throw failure;
  return out;
}
