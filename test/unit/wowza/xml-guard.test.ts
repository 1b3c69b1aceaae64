import { describe, expect, it } from 'vitest';
import { XML_LIMITS, XmlGuard } from '../../../src/wowza/xml-guard.js';

/** Feeds `xml` to a fresh guard in chunks of `size` bytes; the reason and the chunk it came at, if refused. */
function feed(xml: string | Buffer, size: number): { reason?: string; chunk?: number } {
  const bytes = typeof xml === 'string' ? Buffer.from(xml) : xml;
  const guard = new XmlGuard();
  for (let at = 0, chunk = 0; at < bytes.length; at += size, chunk++) {
    const reason = guard.refuse(bytes.subarray(at, at + size));
    if (reason) return { reason, chunk };
  }
  return {};
}

const TREE = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE WowzaStreamingEngine [ <!ELEMENT Name (#PCDATA)> ]>
<WowzaStreamingEngine><ConnectionsCurrent>3</ConnectionsCurrent>
  <!-- a comment with <b>tags</b> in it -->
  <VHost><Name>_defaultVHost_</Name><Application><Name>live</Name><ApplicationInstance><Name>_definst_</Name>
    <Stream><Name>caf&#233; cam</Name><SessionsFlash>1</SessionsFlash><SessionsTotal>1</SessionsTotal><Extra><![CDATA[<x><y><z>]]></Extra></Stream>
    <Stream><Name>cam2</Name><SessionsTotal>0</SessionsTotal><Empty/></Stream>
  </ApplicationInstance></Application></VHost>
</WowzaStreamingEngine>`;
const FLAT = `<?xml version="1.0"?><WowzaStreamingEngine>${Array.from({ length: 200 }, (_, i) => `<Stream vhostName="_defaultVHost_" applicationName='live' appInstanceName="_definst_" streamName="a&gt;b/${i} ü" sessionsFlash="1" sessionsTotal="1" />`).join('\n')}</WowzaStreamingEngine>`;

describe('the XML guard on a body as it streams in', () => {
  it('lets real documents through, in any chunks: comments, CDATA, DOCTYPE, `>` and `/` in values are not elements', () => {
    for (const xml of [TREE, FLAT]) for (const size of [1, 3, 64, 1 << 20]) expect(feed(xml, size), `${size}-byte chunks`).toEqual({});
    // 32 levels, with markup inside that would be deeper if it counted.
    const deepest = `<WowzaStreamingEngine>${'<a x="b>c/>">'.repeat(31)}<!--<d><e>--><![CDATA[<f>]]>${'</a>'.repeat(31)}</WowzaStreamingEngine>`;
    expect(feed(deepest, 7)).toEqual({});
  });

  it('refuses a 1 MB document nested 100,000 deep at its first 64 KiB chunk, before the rest is read', () => {
    const nested = `<WowzaStreamingEngine>${'<Stream>'.repeat(100_000)}${'</Stream>'.repeat(100_000)}</WowzaStreamingEngine>`;
    expect(Buffer.byteLength(nested)).toBeGreaterThan(1_000_000);
    expect(feed(nested, 64 * 1024)).toEqual({ reason: `XML nested deeper than ${XML_LIMITS.depth} levels`, chunk: 0 });
  });

  it('refuses an answer that is not a connectioncounts document by its root, at once', () => {
    expect(feed('<!DOCTYPE html>\n<html><head><title>Login</title>', 4)).toEqual({ reason: 'the root element is <html>, not <WowzaStreamingEngine>: is this the connectioncounts URL?', chunk: 5 });
    expect(feed('<WowzaMediaServer><Stream streamName="x"/></WowzaMediaServer>', 5)).toEqual({});
  });

  it('names the cap a body passed, and keeps refusing after it', () => {
    const guard = new XmlGuard();
    expect(guard.refuse(Buffer.from(`<WowzaStreamingEngine><a b="${'v'.repeat(XML_LIMITS.valueBytes + 1)}"`))).toBe('an XML attribute value longer than 8192 bytes');
    expect(guard.refuse(Buffer.from('/></WowzaStreamingEngine>'))).toBe('an XML attribute value longer than 8192 bytes');
    expect(feed(`<WowzaStreamingEngine><?pi ${'x'.repeat(XML_LIMITS.valueBytes)}?>`, 100).reason).toBe('an XML processing instruction longer than 8192 bytes');
    expect(feed(`<!DOCTYPE x [${'x'.repeat(XML_LIMITS.valueBytes)}]><WowzaStreamingEngine/>`, 100).reason).toBe('an XML DOCTYPE longer than 8192 bytes');
  });
});
