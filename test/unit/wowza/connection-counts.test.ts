import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_STREAMS, parseConnectionCounts, readPlainFlat, streamKey } from '../../../src/wowza/connection-counts.js';
import { XML_LIMITS } from '../../../src/wowza/xml-guard.js';

const TREE = `<?xml version="1.0"?>
<WowzaStreamingEngine>
  <ConnectionsCurrent>12</ConnectionsCurrent>
  <MessagesInBytesRate>1234.0</MessagesInBytesRate>
  <VHost>
    <Name>_defaultVHost_</Name>
    <TimeRunning>1234.5</TimeRunning>
    <ConnectionsLimit>0</ConnectionsLimit>
    <Application>
      <Name>live</Name>
      <Status>loaded</Status>
      <ApplicationInstance>
        <Name>_definst_</Name>
        <Stream>
          <Name>cam1.sdp</Name>
          <SessionsFlash>3</SessionsFlash>
          <SessionsCupertino>5</SessionsCupertino>
          <SessionsSanJose>0</SessionsSanJose>
          <SessionsSmooth>0</SessionsSmooth>
          <SessionsRTSP>1</SessionsRTSP>
          <SessionsMPEGDash>2</SessionsMPEGDash>
          <SessionsWebRTC>4</SessionsWebRTC>
          <SomethingNew><Deep>x</Deep></SomethingNew>
          <SessionsTotal>15</SessionsTotal>
        </Stream>
        <Stream><Name>cam2</Name><SessionsTotal>0</SessionsTotal></Stream>
      </ApplicationInstance>
    </Application>
  </VHost>
</WowzaStreamingEngine>`;

const FLAT = `<?xml version="1.0"?>
<WowzaStreamingEngine>
<Stream vhostName="_defaultVHost_" applicationName="live" appInstanceName="_definst_" streamName="a&amp;b" sessionsFlash="1" sessionsCupertino="2" sessionsSanJose="0" sessionsSmooth="0" sessionsRTSP="0" sessionsMPEGDash="0" sessionsTotal="3"/>
</WowzaStreamingEngine>`;

describe('connectioncounts document', () => {
  it('reads the tree: names from Name elements, sessions by protocol, unknown elements ignored or kept as protocols', async () => {
    const m = await parseConnectionCounts(TREE);
    expect(m.size).toBe(2);
    const s = m.get(streamKey('_defaultVHost_', 'live', '_definst_', 'cam1.sdp'))!;
    expect(s.sessions).toEqual({ Flash: 3, Cupertino: 5, SanJose: 0, Smooth: 0, RTSP: 1, MPEGDash: 2, WebRTC: 4 });
    expect(s.total).toBe(15);
    expect(m.get(streamKey('_defaultVHost_', 'live', '_definst_', 'cam2'))!.total).toBe(0);
  });

  it('reads the flat form from attributes, entities decoded', async () => {
    const s = (await parseConnectionCounts(FLAT)).get(streamKey('_defaultVHost_', 'live', '_definst_', 'a&b'))!;
    expect(s).toMatchObject({ sessions: { Flash: 1, Cupertino: 2, SanJose: 0, Smooth: 0, RTSP: 0, MPEGDash: 0 }, total: 3 });
  });

  it('says what is wrong with a document it cannot read', async () => {
    await expect(parseConnectionCounts('<html><body>login</body></html>')).rejects.toThrow(/root element is <html>, not <WowzaStreamingEngine>/);
    await expect(parseConnectionCounts('<WowzaStreamingEngine><VHost>')).rejects.toThrow(/not well-formed XML/);
    await expect(parseConnectionCounts(TREE.replace('<SessionsFlash>3<', '<SessionsFlash>lots<'))).rejects.toThrow(/stream cam1.sdp SessionsFlash is not a count: "lots"/);
    await expect(parseConnectionCounts('<WowzaStreamingEngine><VHost><Name>v</Name><Application><Name>a</Name><ApplicationInstance><Name>i</Name><Stream><SessionsTotal>1</SessionsTotal></Stream></ApplicationInstance></Application></VHost></WowzaStreamingEngine>')).rejects.toThrow(/<Stream> has no <Name>/);
  });
});

/** A document whose root holds `body`. */
const doc = (body: string) => `<?xml version="1.0"?>\n<WowzaStreamingEngine>${body}</WowzaStreamingEngine>`;
/** One flat stream with `extra` attributes. */
const flatStream = (name: string, extra = '') => `<Stream vhostName="_defaultVHost_" applicationName="live" appInstanceName="_definst_" streamName="${name}" sessionsTotal="1"${extra}/>`;

describe('connectioncounts document caps (XML_LIMITS): a hostile document is refused, saying which cap it passed', () => {
  it('depth: 32 levels are read, 33 refused; a document nested 100,000 deep is refused', async () => {
    const nested = (levels: number) => `<WowzaStreamingEngine>${'<a>'.repeat(levels - 1)}${'</a>'.repeat(levels - 1)}</WowzaStreamingEngine>`;
    expect((await parseConnectionCounts(nested(XML_LIMITS.depth))).size).toBe(0);
    await expect(parseConnectionCounts(nested(XML_LIMITS.depth + 1))).rejects.toThrow('XML nested deeper than 32 levels');
    await expect(parseConnectionCounts(nested(100_000))).rejects.toThrow('XML nested deeper than 32 levels');
  });

  it('elements: more than 2,000,000 are refused', async () => {
    await expect(parseConnectionCounts(doc('<a/>'.repeat(XML_LIMITS.elements)))).rejects.toThrow('XML with more than 2000000 elements');
  });

  it('attributes: 64 on an element are read, 65 refused', async () => {
    const extra = (n: number) => Array.from({ length: n }, (_, i) => ` x${i}="1"`).join('');
    // A flat stream has 5 attributes of its own here.
    expect((await parseConnectionCounts(doc(flatStream('s', extra(XML_LIMITS.attributes - 5))))).size).toBe(1);
    await expect(parseConnectionCounts(doc(flatStream('s', extra(XML_LIMITS.attributes - 4))))).rejects.toThrow('an XML element with more than 64 attributes');
  });

  it('names: an element or attribute name of 257 bytes is refused', async () => {
    const long = 'N'.repeat(XML_LIMITS.nameBytes + 1);
    await expect(parseConnectionCounts(doc(`<${long}/>`))).rejects.toThrow('an XML name longer than 256 bytes');
    await expect(parseConnectionCounts(doc(flatStream('s', ` ${long}="1"`)))).rejects.toThrow('an XML name longer than 256 bytes');
    await expect(parseConnectionCounts(doc(`<a></${long}>`))).rejects.toThrow('an XML name longer than 256 bytes');
  });

  it('values: an attribute value, a text, a comment of 8193 bytes are refused; 8192 are read', async () => {
    const name = (n: number) => 'v'.repeat(n);
    expect([...(await parseConnectionCounts(doc(flatStream(name(XML_LIMITS.valueBytes))))).values()][0]!.stream).toHaveLength(8192);
    await expect(parseConnectionCounts(doc(flatStream(name(XML_LIMITS.valueBytes + 1))))).rejects.toThrow('an XML attribute value longer than 8192 bytes');
    const tree = (stream: string) => doc(`<VHost><Name>v</Name><Application><Name>a</Name><ApplicationInstance><Name>i</Name><Stream><Name>${stream}</Name></Stream></ApplicationInstance></Application></VHost>`);
    expect((await parseConnectionCounts(tree(name(XML_LIMITS.valueBytes)))).size).toBe(1);
    await expect(parseConnectionCounts(tree(name(XML_LIMITS.valueBytes + 1)))).rejects.toThrow('XML text longer than 8192 bytes between two tags');
    await expect(parseConnectionCounts(doc(`<!--${'-x'.repeat(5000)}-->`))).rejects.toThrow('an XML comment longer than 8192 bytes');
    await expect(parseConnectionCounts(doc(`<![CDATA[${'x'.repeat(9000)}]]>`))).rejects.toThrow('an XML CDATA section longer than 8192 bytes');
  });

  it('document size: past its cap (max_response_size, at most 64 MiB) it is refused as too large', async () => {
    const small = doc(flatStream('a') + flatStream('b'));
    await expect(parseConnectionCounts(small, { maxBytes: 100 })).rejects.toMatchObject({ message: 'XML document larger than 100 bytes', tooLarge: true });
    await expect(parseConnectionCounts(Buffer.alloc(XML_LIMITS.documentBytes + 1, ' '))).rejects.toMatchObject({ message: `XML document larger than ${64 * 1024 * 1024} bytes`, tooLarge: true });
  });

  it('streams: more than 250,000 in one document are refused', async () => {
    await expect(parseConnectionCounts(doc(Array.from({ length: MAX_STREAMS + 1 }, (_, i) => `<Stream streamName="s${i}"/>`).join('')))).rejects.toThrow('more than 250000 streams in one document');
  });
});

describe('connectioncounts parse cost', () => {
  /** Milliseconds per KB of the fastest of three parses (the fastest is the least disturbed by a loaded machine). */
  async function msPerKb(xml: string): Promise<number> {
    const bytes = Buffer.from(xml);
    let best = Infinity;
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      await parseConnectionCounts(bytes).catch(() => undefined);
      best = Math.min(best, performance.now() - started);
    }
    return best / (bytes.length / 1024);
  }

  it('is linear in the document size, whatever its shape (8 times the bytes cost about 8 times the time)', async () => {
    const shapes: Record<string, (n: number) => string> = {
      flat: (n) => doc(Array.from({ length: n }, (_, i) => flatStream(`s${i}`, ' sessionsFlash="1" sessionsCupertino="2"')).join('')),
      tree: (n) => doc(`<VHost><Name>v</Name><Application><Name>a</Name><ApplicationInstance><Name>i</Name>${Array.from({ length: n }, (_, i) => `<Stream><Name>s${i}</Name><SessionsFlash>1</SessionsFlash><SessionsTotal>1</SessionsTotal></Stream>`).join('')}</ApplicationInstance></Application></VHost>`),
      // The shape that was quadratic: streams deep in the tree, every one looking up its vhost, application, instance.
      deep: (n) => doc(`${'<VHost><Name>v</Name>'.repeat(25)}<Application><Name>a</Name><ApplicationInstance><Name>i</Name>${'<Stream><Name>s</Name></Stream>'.repeat(n)}</ApplicationInstance></Application>${'</VHost>'.repeat(25)}`),
      // Quadratic before the depth cap (a stream at every level, each walking the levels above it): now refused at the
      // cap after a bounded amount of work, however deep it goes.
      streamPerLevel: (n) => doc(`${'<a><Stream><Name>s</Name></Stream>'.repeat(n)}${'</a>'.repeat(n)}`),
    };
    for (const [shape, make] of Object.entries(shapes)) {
      const small = await msPerKb(make(4_000));
      const large = await msPerKb(make(32_000));
      // Quadratic would be about 8 times the cost per KB; the bound leaves room for a machine that is busy.
      expect(large / small, `${shape}: ${small.toFixed(4)} then ${large.toFixed(4)} ms per KB`).toBeLessThan(3);
    }
  });

  it('yields to the event loop while it reads a large document, and stops when its signal aborts', async () => {
    const large = Buffer.from(doc(Array.from({ length: 60_000 }, (_, i) => flatStream(`stream-${i}`, ' sessionsFlash="1" sessionsCupertino="2" sessionsSanJose="0" sessionsSmooth="0"')).join('')));
    let ticks = 0;
    let longest = 0;
    let last = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
      ticks++;
    }, 1);
    try {
      expect((await parseConnectionCounts(large)).size).toBe(60_000);
      // A parse that held the thread would let no timer run until it ended.
      expect(ticks).toBeGreaterThan(3);
      expect(longest).toBeLessThan(500);
      const stop = new AbortController();
      const parsing = parseConnectionCounts(large, { signal: stop.signal });
      setImmediate(() => stop.abort(new Error('shutting down')));
      await expect(parsing).rejects.toThrow('shutting down');
    } finally {
      clearInterval(timer);
    }
  });
});

describe('names as the provider writes them: URL-encoded by Java (issue 38)', () => {
  it('decodes + and %XX of UTF-8, and leaves what is not an escape as written', async () => {
    const { decodeJavaUrl } = await import('../../../src/wowza/java-url-decoding.js');
    expect(decodeJavaUrl('cam+1')).toBe('cam 1');
    expect(decodeJavaUrl('15%7Emax')).toBe('15~max');
    expect(decodeJavaUrl('mp4%3Alive%2Ffeed')).toBe('mp4:live/feed');
    // Verbatim from a real document (test/fixtures/real-world/connectioncounts).
    expect(decodeJavaUrl('294%2F294%2F294_content_lq.mp4')).toBe('294/294/294_content_lq.mp4');
    expect(decodeJavaUrl('%E2%82%AC+%C3%A9t%C3%A9')).toBe('€ été');
    expect(decodeJavaUrl('100%')).toBe('100%');
    expect(decodeJavaUrl('a%zzb')).toBe('a%zzb');
    expect(decodeJavaUrl('%FF')).toBe('\ufffd');
    expect(decodeJavaUrl('plain_name.mp4')).toBe('plain_name.mp4');
  });
});

describe('the flat form read in one pass (a document the client already held to the caps)', () => {
  const guarded = (xml: string) => parseConnectionCounts(Buffer.from(xml), { guarded: true });
  const general = (xml: string) => parseConnectionCounts(xml);
  const outcome = (p: Promise<Map<string, unknown>>) => p.then((m) => ({ streams: [...m] }), (err: Error) => ({ error: err.message }));

  // Pieces of names and values: plain, URL-encoded, entities (known and not), characters XML refuses or normalizes.
  const text = fc.array(fc.constantFrom('cam', '1', '_', '.', '%2F', '+', '%E2%82%AC', '€', 'é', '&amp;', '&lt;', '&quot;', '&apos;', '&gt;', '&nbsp;', '&#38;', '&', '<', '>', "'", ' ', '\t', '\n', '\u0001', '-'), { maxLength: 6 }).map((p) => p.join(''));
  const count = fc.oneof(fc.nat({ max: 5000 }).map(String), fc.constantFrom('1.5', ' 2 ', '', 'lots', '-1', '1e3', '0x10'));
  const attribute = fc.oneof(
    fc.tuple(fc.constantFrom('vhostName', 'applicationName', 'appInstanceName', 'streamName'), text),
    fc.tuple(fc.constantFrom('sessionsFlash', 'sessionsCupertino', 'sessionsWebRTC', 'sessionsTotal', 'sessionsNewThing', 'sessions', 'other'), count),
  );
  const quoting = fc.constantFrom('"', "'");
  const element = fc.record({
    attrs: fc.array(attribute, { maxLength: 8 }),
    streamName: fc.option(text, { nil: undefined }),
    quote: fc.oneof({ weight: 9, arbitrary: fc.constant('"') }, { weight: 1, arbitrary: quoting }),
    space: fc.constantFrom(' ', '\n  ', ' ', '\t'),
    close: fc.constantFrom('/>', '/>', ' />', '></Stream>'),
  });
  const document = fc.record({
    prolog: fc.constantFrom('<?xml version="1.0" encoding="UTF-8"?>\n', '', '<!-- made by hand -->'),
    root: fc.oneof({ weight: 9, arbitrary: fc.constant('WowzaStreamingEngine') }, { weight: 1, arbitrary: fc.constantFrom('WowzaMediaServer', 'html') }),
    streams: fc.array(element, { maxLength: 6 }),
    between: fc.constantFrom('', '\n', ' ', 'text'),
  });
  type Of<A> = A extends fc.Arbitrary<infer T> ? T : never;
  const render = (d: Of<typeof document>) => {
    const stream = (e: Of<typeof element>) => {
      const attrs = [...(e.streamName !== undefined ? [['streamName', e.streamName] as const] : []), ...e.attrs];
      return `<Stream${attrs.map(([k, v]) => `${e.space}${k}=${e.quote}${v}${e.quote}`).join('')}${e.close}`;
    };
    return `${d.prolog}<${d.root}>${d.streams.map(stream).join(d.between)}</${d.root}>\n`;
  };

  it('gives what the general parser gives, for any flat document, and the same error for one it cannot read', async () => {
    await fc.assert(
      fc.asyncProperty(document, async (d) => {
        const xml = render(d);
        expect(await outcome(guarded(xml)), xml).toEqual(await outcome(general(xml)));
      }),
      { numRuns: 600, seed: 48 },
    );
  });

  it('reads the simulator\'s and the README\'s documents, names decoded and sessions by protocol', async () => {
    const s = (await guarded(FLAT)).get(streamKey('_defaultVHost_', 'live', '_definst_', 'a&b'))!;
    expect(s).toMatchObject({ sessions: { Flash: 1, Cupertino: 2, SanJose: 0, Smooth: 0, RTSP: 0, MPEGDash: 0 }, total: 3 });
    const encoded = doc(flatStream('294%2F294%2F294_content_lq.mp4', ' sessionsFlash="4"'));
    expect([...(await guarded(encoded)).values()]).toEqual([...(await general(encoded)).values()]);
    await expect(guarded(doc(flatStream('cam', ' sessionsFlash="lots"')))).rejects.toThrow(/stream cam SessionsFlash is not a count: "lots"/);
  });

  it('reads the plain flat form itself, and leaves anything else to the general parser', async () => {
    expect(await readPlainFlat(Buffer.from(FLAT), undefined)).toHaveLength(1);
    expect(await readPlainFlat(Buffer.from(doc(flatStream('a') + '\n' + flatStream('b'))), undefined)).toHaveLength(2);
    for (const other of [TREE, doc(`<!-- x -->${flatStream('a')}`), doc(flatStream('a').replaceAll('"', "'")), doc(flatStream('a&nbsp;b')), doc(`text${flatStream('a')}`)]) {
      expect(await readPlainFlat(Buffer.from(other), undefined), other).toBeUndefined();
    }
  });

  it('yields to the event loop on a large document and stops when its signal aborts', async () => {
    const large = Buffer.from(doc(Array.from({ length: 200_000 }, (_, i) => flatStream(`stream-${i}`, ' sessionsFlash="1" sessionsCupertino="2" sessionsSanJose="0" sessionsSmooth="0"')).join('')));
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    try {
      expect((await parseConnectionCounts(large, { guarded: true })).size).toBe(200_000);
      expect(ticks).toBeGreaterThan(3);
      const stop = new AbortController();
      const parsing = parseConnectionCounts(large, { guarded: true, signal: stop.signal });
      setImmediate(() => stop.abort(new Error('shutting down')));
      await expect(parsing).rejects.toThrow('shutting down');
    } finally {
      clearInterval(timer);
    }
  });
});
